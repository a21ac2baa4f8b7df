package admin

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// PendingSort orders Pending's result.
type PendingSort int

// Orders of Pending's result.
const (
	SortByIdle       PendingSort = iota // longest idle first (then most deliveries)
	SortByDeliveries                    // most deliveries first (then longest idle)
	SortByID                            // oldest id first across partitions (then partition)
)

// Pending defaults and bounds.
const (
	// DefaultPendingLimit is Pending's default Limit.
	DefaultPendingLimit = 100
	// MaxPendingPerPartition is Pending's default and largest PerPartition (the seed's cap).
	MaxPendingPerPartition = 200
)

// PendingOptions tunes Pending. Zero values mean the defaults.
type PendingOptions struct {
	// Limit is the most entries returned in total. Optional; default 100.
	Limit int
	// Sort orders the entries. Optional; default SortByIdle.
	Sort PendingSort
	// MinIdle keeps only entries idle at least this long (XPENDING IDLE). Optional; default 0.
	MinIdle time.Duration
	// PerPartition is how many pending entries are sampled per partition: the oldest by id.
	// Optional; default and maximum 200 (the seed's).
	PerPartition int
}

// PendingEntry is one delivered, unacked entry of a group.
type PendingEntry struct {
	Partition  int
	ID         string
	Consumer   string
	Idle       time.Duration
	Deliveries int64
}

// Pending samples group's pending entries on every partition of topic (XPENDING with IDLE,
// the oldest PerPartition per partition, in one pipeline), merges them, sorts them by
// opts.Sort and returns at most opts.Limit. ErrGroupNotFound when the group exists on no
// partition.
func (a *Admin) Pending(ctx context.Context, topic, group string, opts PendingOptions) ([]PendingEntry, error) {
	if err := checkGroup(group); err != nil {
		return nil, err
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	all, err := a.samplePending(ctx, topic, group, n, opts)
	if err != nil {
		return nil, err
	}
	sortPending(all, opts.Sort)
	return all[:min(len(all), opts.Limit)], nil
}

func (o PendingOptions) withDefaults() (PendingOptions, error) {
	if o.MinIdle < 0 || o.Sort < SortByIdle || o.Sort > SortByID {
		return o, fmt.Errorf("%w: pending options: MinIdle %s, Sort %d", ErrInvalidArgument, o.MinIdle, o.Sort)
	}
	if o.Limit <= 0 {
		o.Limit = DefaultPendingLimit
	}
	if o.PerPartition <= 0 || o.PerPartition > MaxPendingPerPartition {
		o.PerPartition = MaxPendingPerPartition
	}
	return o, nil
}

// samplePending samples group's pending entries on topic's n partitions (see Pending).
func (a *Admin) samplePending(ctx context.Context, topic, group string, n int, opts PendingOptions) ([]PendingEntry, error) {
	keys := streams(a.space.PartitionStream, topic, 0, n)
	sample, found, err := stream.PendingSample(ctx, a.rdb, keys, group, opts.MinIdle, int64(opts.PerPartition))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	var all []PendingEntry
	for p, es := range sample {
		for _, e := range es {
			all = append(all, PendingEntry{Partition: p, ID: e.ID, Consumer: e.Consumer, Idle: e.Idle, Deliveries: e.Deliveries})
		}
	}
	return all, nil
}

func sortPending(all []PendingEntry, by PendingSort) {
	byID := func(x, y PendingEntry) bool {
		if x.ID != y.ID {
			return streamid.Less(x.ID, y.ID)
		}
		return x.Partition < y.Partition
	}
	less := map[PendingSort]func(x, y PendingEntry) bool{
		SortByIdle: func(x, y PendingEntry) bool {
			return x.Idle > y.Idle || (x.Idle == y.Idle && x.Deliveries > y.Deliveries)
		},
		SortByDeliveries: func(x, y PendingEntry) bool {
			return x.Deliveries > y.Deliveries || (x.Deliveries == y.Deliveries && x.Idle > y.Idle)
		},
		SortByID: byID,
	}[by]
	sort.SliceStable(all, func(i, j int) bool {
		if less(all[i], all[j]) {
			return true
		}
		return !less(all[j], all[i]) && byID(all[i], all[j])
	})
}
