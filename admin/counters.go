package admin

import (
	"context"
	"time"

	"github.com/streamq-dev/streamq/internal/lag"
)

// TopicCounters is a snapshot of a topic's ever-growing counters, for rates: read it twice
// and divide the differences by the time between the two reads.
type TopicCounters struct {
	Topic      string
	Partitions int
	// Time is the Redis server's clock when the counters were read (the clock stream ids are
	// written with), so rates do not depend on the reader's clock.
	Time time.Time
	// Published is how many messages were ever published to the topic's partitions: the
	// entries ever appended (EntriesAdded) less the retry entries (RetriesAdded). Its rate is
	// the publish rate.
	Published int64
	// RetriesAdded is how many retry entries were ever appended (retries, and replays to one
	// group); its rate is the retry rate.
	RetriesAdded int64
	// EntriesAdded is how many entries were ever appended to the topic's partitions (Redis 7
	// XINFO STREAM entries-added), retries included, summed; trimming and deleting do not
	// lower it.
	EntriesAdded int64
	// Length is how many published messages the partitions hold now, summed; Retries how many
	// retry entries (TopicLag.Length, TopicLag.Retries).
	Length, Retries int64
	// Groups holds every consumer group registered on any partition, by name.
	Groups map[string]GroupCounters
}

// GroupCounters are one consumer group's counters, summed over a topic's partitions.
type GroupCounters struct {
	// EntriesRead is how many entries were delivered to the group so far (Redis 7 XINFO
	// GROUPS entries-read; a partition where Redis does not know it counts 0), the other
	// groups' retries it skipped included. XGROUP SETID (ResetGroupOffset) may move it either
	// way.
	EntriesRead int64
	// Lag is the entries the group still has to deliver, as GroupLag.Lag.
	Lag int64
	// TimeLag is the largest of the partitions' (GroupLag.TimeLag).
	TimeLag time.Duration
	// Pending is the entries delivered and not yet acked.
	Pending int64
}

// TopicCounters reads the topic's counters and lag in the pipelines TopicLag uses, on the
// server's clock.
func (a *Admin) TopicCounters(ctx context.Context, topic string) (TopicCounters, error) {
	s, err := a.readLag(ctx, topic, "")
	if err != nil {
		return TopicCounters{}, err
	}
	c := TopicCounters{Topic: topic, Partitions: len(s.Partitions), Time: s.Now, Groups: map[string]GroupCounters{}}
	for _, p := range s.Partitions {
		c.Published += p.PublishedAdded()
		c.RetriesAdded += p.RetriesAdded
		c.EntriesAdded += p.EntriesAdded()
		c.Length += p.Published()
		c.Retries += p.Retries
		for _, g := range p.Groups {
			c.Groups[g.Name] = c.Groups[g.Name].add(g, s.Now)
		}
	}
	return c, nil
}

func (gc GroupCounters) add(g lag.Group, now time.Time) GroupCounters {
	gc.EntriesRead += max(g.EntriesRead, 0)
	gc.Lag += g.Lag
	gc.TimeLag = max(gc.TimeLag, g.TimeLag(now))
	gc.Pending += g.Pending
	return gc
}
