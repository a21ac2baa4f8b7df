package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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

// PendingOrder is the direction of Pending's Sort.
type PendingOrder int

// Directions of Pending's Sort.
const (
	// OrderDefault is each Sort's own direction: SortByIdle and SortByDeliveries descending
	// (longest idle, most deliveries first), SortByID ascending (oldest first).
	OrderDefault PendingOrder = iota
	// Ascending puts the smallest first: shortest idle, fewest deliveries, oldest id.
	Ascending
	// Descending puts the largest first: longest idle, most deliveries, newest id.
	Descending
)

// Pending defaults and bounds.
const (
	// DefaultPendingLimit is Pending's default Limit.
	DefaultPendingLimit = 100
	// MaxPendingPerPartition is Pending's default and largest PerPartition.
	MaxPendingPerPartition = 200
)

// PendingOptions tunes Pending. Zero values mean the defaults.
type PendingOptions struct {
	// Limit is the most entries returned in total. Optional; default 100.
	Limit int
	// Sort orders the entries. Optional; default SortByIdle.
	Sort PendingSort
	// Order is the direction of Sort. Optional; default OrderDefault (Sort's own direction).
	Order PendingOrder
	// MinIdle keeps only entries idle at least this long (XPENDING IDLE). Optional; default 0.
	MinIdle time.Duration
	// PerPartition is how many pending entries are sampled per partition: the oldest by id.
	// Optional; default and maximum 200.
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
	sortPending(all, opts.Sort, opts.Order)
	return all[:min(len(all), opts.Limit)], nil
}

func (o PendingOptions) withDefaults() (PendingOptions, error) {
	if o.MinIdle < 0 || o.Sort < SortByIdle || o.Sort > SortByID || o.Order < OrderDefault || o.Order > Descending {
		return o, fmt.Errorf("%w: pending options: MinIdle %s, Sort %d, Order %d", ErrInvalidArgument, o.MinIdle, o.Sort, o.Order)
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

// sortPending sorts all by the key of by in direction order; entries equal by it keep the
// order of their ids (then partitions), oldest first.
func sortPending(all []PendingEntry, by PendingSort, order PendingOrder) {
	asc := pendingKeys[by]
	primary := asc
	if order == Descending || (order == OrderDefault && by != SortByID) {
		primary = func(x, y PendingEntry) int { return asc(y, x) }
	}
	slices.SortStableFunc(all, func(x, y PendingEntry) int {
		if c := primary(x, y); c != 0 {
			return c
		}
		return compareID(x, y)
	})
}

// pendingKeys compare two entries by each Sort, ascending.
var pendingKeys = map[PendingSort]func(x, y PendingEntry) int{
	SortByIdle: func(x, y PendingEntry) int {
		return cmp.Or(cmp.Compare(x.Idle, y.Idle), cmp.Compare(x.Deliveries, y.Deliveries))
	},
	SortByDeliveries: func(x, y PendingEntry) int {
		return cmp.Or(cmp.Compare(x.Deliveries, y.Deliveries), cmp.Compare(x.Idle, y.Idle))
	},
	SortByID: compareID,
}

// compareID orders by stream id, then partition.
func compareID(x, y PendingEntry) int {
	switch {
	case streamid.Less(x.ID, y.ID):
		return -1
	case streamid.Less(y.ID, x.ID):
		return 1
	}
	return cmp.Compare(x.Partition, y.Partition)
}
