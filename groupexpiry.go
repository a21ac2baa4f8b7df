package streamq

import (
	"time"
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
