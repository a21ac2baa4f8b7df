package lag

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// ScanLimit bounds the entries read to count a lag Redis cannot report (stream.LagScanLimit)
// and the entries walked to find an oldest undelivered entry behind other groups' retries.
const ScanLimit = stream.LagScanLimit

// Group is one consumer group on one partition.
type Group struct {
	Name          string
	LastDelivered string // the group's position: it delivers the entries after it
	// Lag is the entries after LastDelivered the group still has to deliver: other groups'
	// retries among them (Skipped) are not counted.
	Lag int64
	// Exact is false when a bound was hit: Lag is then a lower bound (more than ScanLimit
	// entries to count by hand), or Oldest is the last of ScanLimit entries walked that were
	// all other groups' retries (its age an upper bound of the time lag).
	Exact bool
	// Skipped is how many entries after LastDelivered are other groups' retries.
	Skipped int64
	// Oldest is the id of the oldest entry the group has still to deliver, "" when none.
	Oldest string
	// Pending is the entries delivered and not acked; OldestPending the smallest of their ids
	// ("" when none), idle for PendingIdle since its last delivery, delivered
	// PendingDeliveries times.
	Pending           int64
	OldestPending     string
	PendingIdle       time.Duration
	PendingDeliveries int64
	Consumers         int64 // Redis consumers registered on the group, live or not
	EntriesRead       int64 // Redis 7 entries-read (0 when Redis does not know)
}

// TimeLag is the age at now of g's oldest undelivered entry (0 when there is none).
func (g Group) TimeLag(now time.Time) time.Duration { return age(now, g.Oldest) }

// PendingAge is the age at now of g's oldest pending entry (0 when there is none).
func (g Group) PendingAge(now time.Time) time.Duration { return age(now, g.OldestPending) }

func age(now time.Time, id string) time.Duration {
	if id == "" {
		return 0
	}
	return max(now.Sub(streamid.Time(id)), 0)
}

// Partition is one partition stream and its groups.
type Partition struct {
	Index int
	Info  *stream.Info // XINFO STREAM; nil for a stream never written
	// Retries is how many of the entries the stream holds are retry entries (of any group);
	// Info.Length - Retries are published messages.
	Retries int64
	// RetriesAdded is how many retry entries were ever appended; Info.EntriesAdded -
	// RetriesAdded are the messages ever published.
	RetriesAdded int64
	Groups       []Group // in XINFO GROUPS order; only the group asked for when one was
}

// Length is the entries the partition holds (0 for a stream never written).
func (p Partition) Length() int64 {
	if p.Info == nil {
		return 0
	}
	return p.Info.Length
}

// Published is the published messages the partition holds: its entries less its retries.
func (p Partition) Published() int64 { return max(p.Length()-p.Retries, 0) }

// EntriesAdded is the entries ever appended (0 for a stream never written).
func (p Partition) EntriesAdded() int64 {
	if p.Info == nil {
		return 0
	}
	return p.Info.EntriesAdded
}

// PublishedAdded is the messages ever published to the partition (entries added less
// retries added).
func (p Partition) PublishedAdded() int64 { return max(p.EntriesAdded()-p.RetriesAdded, 0) }

// Snapshot is the lag of a topic's groups, read at Now on the server's clock.
type Snapshot struct {
	Now        time.Time
	Partitions []Partition
}

// Read reads the lag of every group (only that group when only is not "") on the n
// partitions of topic: one pipeline for the server's clock, XINFO STREAM, XINFO GROUPS and
// the retry counts, stream.Lags (a pipeline only where Redis cannot report a lag), one
// pipeline for the retry indexes, first entries and oldest pending entries, and one script
// call per group and partition whose next entry is another group's retry.
func Read(ctx context.Context, rdb redis.UniversalClient, space keys.Space, topic string, n int, only string) (Snapshot, error) {
	parts := make([]string, n)
	for p := range parts {
		parts[p] = space.PartitionStream(topic, p)
	}
	b, err := readBase(ctx, rdb, parts)
	if err != nil {
		return Snapshot{}, err
	}
	counts, err := stream.Lags(ctx, rdb, parts, b.groups, b.tails())
	if err != nil {
		return Snapshot{}, err
	}
	plan := newPlan(b, counts, only)
	if err := plan.read(ctx, rdb, parts); err != nil {
		return Snapshot{}, err
	}
	if err := plan.walk(ctx, rdb, parts); err != nil {
		return Snapshot{}, err
	}
	return plan.snapshot(), nil
}
