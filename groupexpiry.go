package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"
)

// GroupExpiryReporter is implemented by a MetricsCollector that counts group expiries
// (package metrics/prometheus does): a retention trim of a Publisher or of a lease holder
// left group l.Group out on partition l.Partition of l.Topic, because no member of the group
// was live there for the GroupExpiry (l.Consumer is empty). Each expiry is reported once, by the trim that found
// it. Optional: a collector without it counts nothing (the entries the expired group loses
// are counted by Trimmed all the same).
type GroupExpiryReporter interface {
	GroupExpired(l Labels)
}

// groupExpiryOf is the expiry a retention rule takes: 0 when off.
func groupExpiryOf(d time.Duration) time.Duration { return max(d, 0) }

// reportExpired logs and counts the groups a trim of a partition was the first to leave out
// for their group expiry.
func reportExpired(logger watermill.LoggerAdapter, m MetricsCollector, l Labels, groups []string) {
	r, _ := m.(GroupExpiryReporter)
	for _, g := range groups {
		logger.Info("Consumer group expired on the partition: no member was live there for the group expiry, "+
			"retention no longer waits for it (its offsets stay; what it loses is counted and reported when it comes back)",
			watermill.LogFields{"topic": l.Topic, "partition": l.Partition, "expired_group": g})
		if r != nil {
			r.GroupExpired(Labels{Topic: l.Topic, Partition: l.Partition, Group: g})
		}
	}
}
