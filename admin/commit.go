package admin

import (
	"context"

	"github.com/streamq-dev/streamq/internal/stream"
)

// CommitFrontier returns, per partition, the highest stream id group has acked (the commit
// frontier, which only moves forward); partitions where it acked nothing yet are absent.
// ErrGroupNotFound when the group exists on no partition.
func (a *Admin) CommitFrontier(ctx context.Context, topic, group string) (map[int]string, error) {
	n, _, err := a.groupOn(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return stream.Frontiers(ctx, a.rdb, streams(a.space.Commit, topic, 0, n), group)
}
