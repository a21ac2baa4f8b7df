package admin

import (
	"context"
	"fmt"

	"github.com/streamq-dev/streamq/internal/stream"
)

// GrowPartitions raises topic's partition count to n and returns the new count. It only
// grows: n not above the current count is ErrInvalidArgument. Before the new count is
// published, every consumer group of the existing partitions (and every group consuming
// their DLQs) is created on the new partitions at 0-0, so members running with GroupStartID
// "$" lose nothing published there before they notice the growth. Keys already published
// keep their entries where they are; new keyed messages hash over all n partitions once
// publishers re-read the count (PartitionRefreshInterval).
func (a *Admin) GrowPartitions(ctx context.Context, topic string, n int) (int, error) {
	cur, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	if n <= cur {
		return cur, fmt.Errorf("%w: grow only: topic has %d partitions (%q, asked for %d)", ErrInvalidArgument, cur, topic, n)
	}
	for _, key := range []func(string, int) string{a.space.PartitionStream, a.space.DLQ} {
		if err := a.copyGroups(ctx, streams(key, topic, 0, cur), streams(key, topic, cur, n)); err != nil {
			return cur, err
		}
	}
	return a.reg.Grow(ctx, topic, n)
}

// copyGroups creates every group found on from on each stream of to, at 0-0.
func (a *Admin) copyGroups(ctx context.Context, from, to []string) error {
	groups, err := stream.Groups(ctx, a.rdb, from)
	if err != nil {
		return err
	}
	for _, g := range groupNames(groups) {
		if err := stream.CreateGroups(ctx, a.rdb, to, g, "0-0"); err != nil {
			return fmt.Errorf("grow: %w", err)
		}
	}
	return nil
}
