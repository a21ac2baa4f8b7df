package admin

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/internal/lag"
)

// LagBound bounds the entries read to count a partition's lag when Redis cannot report it
// (after deletions or XGROUP SETID to an id other than 0-0), and the entries walked past
// other groups' retries to find the oldest undelivered entry. A lag past it is reported as
// a lower bound (Exact false).
const LagBound = lag.ScanLimit

// PartitionLag is how far one consumer group is behind on one partition. Every figure is
// read in the same few pipelines and on the Redis server's clock (see GroupLag).
type PartitionLag struct {
	Partition int
	// Lag is the entries the group still has to deliver: those after LastDeliveredID, less
	// other groups' retries among them (Skipped), which it skips without delivering.
	Lag int64
	// Exact is false when LagBound was hit: Lag is then a lower bound, or OldestID the last
	// of LagBound entries that were all other groups' retries (TimeLag an upper bound).
	Exact bool
	// Skipped is the other groups' retry entries after LastDeliveredID (x-retry-group of
	// another group): in the stream, not in the lag.
	Skipped int64
	// OldestID is the oldest entry the group has still to deliver ("" when none); TimeLag is
	// its age: the Redis server's time minus the time in its id, 0 when there is none. A
	// group reset to the start of a backlog published an hour ago has a TimeLag of an hour.
	OldestID string
	TimeLag  time.Duration
	// Pending is the entries delivered and not yet acked. OldestPendingID is the smallest of
	// their ids ("" when none); PendingAge is its age like TimeLag's, PendingIdle the time
	// since it was last delivered to a consumer, PendingDeliveries how often it was.
	Pending           int64
	OldestPendingID   string
	PendingAge        time.Duration
	PendingIdle       time.Duration
	PendingDeliveries int64
	// LastDeliveredID is the group's position: the next delivery is the first entry after
	// it that is not another group's retry.
	LastDeliveredID string
}

// GroupLag is how far one consumer group is behind on a topic.
type GroupLag struct {
	Topic, Group string
	// Time is the Redis server's clock when the lag was read: the ages are measured to it.
	Time    time.Time
	Lag     int64         // summed over partitions
	Exact   bool          // every partition's Lag is exact
	Skipped int64         // summed over partitions
	TimeLag time.Duration // the largest of the partitions'
	Pending int64         // summed over partitions
	// PendingAge is the largest of the partitions'.
	PendingAge time.Duration
	// Partitions holds the partitions on which the group exists, in partition order.
	Partitions []PartitionLag
}

// TopicLag is a topic's size, told apart into published messages and retries, and the lag
// of each of its consumer groups.
type TopicLag struct {
	Topic      string
	Partitions int
	Time       time.Time // the Redis server's clock when read
	// Length is the published messages the partitions hold: their entries less Retries.
	Length int64
	// Retries is the retry entries the partitions hold (retries of every group, and replays
	// to one group: entries carrying x-retry-group).
	Retries int64
	// Published is the messages ever published to the topic (XINFO STREAM entries-added less
	// RetriesAdded): read it twice for a publish rate. RetriesAdded is the retry entries
	// ever appended.
	Published, RetriesAdded int64
	// Groups holds every consumer group registered on any partition, sorted by name.
	Groups []GroupLag
}

// GroupLag reads how far group is behind on every partition of topic: the server's clock,
// XINFO STREAM, XINFO GROUPS and the retry counts in one pipeline; the other groups' retry
// indexes, the first entry after the group's position and its oldest pending entry in a
// second; a count of the entries after its position only where Redis cannot report it
// (bounded, LagBound); and one read-only script call per partition whose next entry is
// another group's retry. None of it grows with the backlog: see docs/observability.md, "Lag that means what it says". It is safe
// for concurrent use; ctx bounds the reads. ErrGroupNotFound when the group exists on no
// partition.
func (a *Admin) GroupLag(ctx context.Context, topic, group string) (GroupLag, error) {
	if err := checkGroup(group); err != nil {
		return GroupLag{}, err
	}
	s, err := a.readLag(ctx, topic, group)
	if err != nil {
		return GroupLag{}, err
	}
	gl := groupLags(topic, s)[group]
	if gl == nil {
		return GroupLag{}, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	return *gl, nil
}

// TopicLag reads the lag of every group of topic (as GroupLag does, for all groups in the
// same pipelines) and the topic's published messages and retries.
func (a *Admin) TopicLag(ctx context.Context, topic string) (TopicLag, error) {
	s, err := a.readLag(ctx, topic, "")
	if err != nil {
		return TopicLag{}, err
	}
	return topicLagOf(topic, s), nil
}

func (a *Admin) readLag(ctx context.Context, topic, group string) (lag.Snapshot, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return lag.Snapshot{}, err
	}
	s, err := lag.Read(ctx, a.rdb, a.space, topic, n, group)
	if err != nil {
		return lag.Snapshot{}, fmt.Errorf("lag of %q: %w", topic, err)
	}
	return s, nil
}

func topicLagOf(topic string, s lag.Snapshot) TopicLag {
	t := TopicLag{Topic: topic, Partitions: len(s.Partitions), Time: s.Now}
	for _, p := range s.Partitions {
		t.Length += p.Published()
		t.Retries += p.Retries
		t.Published += p.PublishedAdded()
		t.RetriesAdded += p.RetriesAdded
	}
	byName := groupLags(topic, s)
	for _, g := range byName {
		t.Groups = append(t.Groups, *g)
	}
	sort.Slice(t.Groups, func(i, j int) bool { return t.Groups[i].Group < t.Groups[j].Group })
	return t
}

// groupLags sums a snapshot by group.
func groupLags(topic string, s lag.Snapshot) map[string]*GroupLag {
	out := map[string]*GroupLag{}
	for _, p := range s.Partitions {
		for _, g := range p.Groups {
			gl := out[g.Name]
			if gl == nil {
				gl = &GroupLag{Topic: topic, Group: g.Name, Time: s.Now, Exact: true}
				out[g.Name] = gl
			}
			gl.add(partitionLag(p.Index, g, s.Now))
		}
	}
	return out
}

func partitionLag(p int, g lag.Group, now time.Time) PartitionLag {
	return PartitionLag{
		Partition: p, Lag: g.Lag, Exact: g.Exact, Skipped: g.Skipped, OldestID: g.Oldest, TimeLag: g.TimeLag(now),
		Pending: g.Pending, OldestPendingID: g.OldestPending, PendingAge: g.PendingAge(now),
		PendingIdle: g.PendingIdle, PendingDeliveries: g.PendingDeliveries, LastDeliveredID: g.LastDelivered,
	}
}

func (gl *GroupLag) add(p PartitionLag) {
	gl.Partitions = append(gl.Partitions, p)
	gl.Lag += p.Lag
	gl.Exact = gl.Exact && p.Exact
	gl.Skipped += p.Skipped
	gl.TimeLag = max(gl.TimeLag, p.TimeLag)
	gl.Pending += p.Pending
	gl.PendingAge = max(gl.PendingAge, p.PendingAge)
}
