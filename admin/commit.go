package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// CommitFrontier returns, per partition, the highest stream id group has acked (the commit
// frontier, which only moves forward); partitions where it acked nothing yet are absent.
// ErrGroupNotFound when the group exists on no partition.
func (a *Admin) CommitFrontier(ctx context.Context, topic, group string) (map[int]string, error) {
	n, _, err := a.groupOn(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.StringCmd, n)
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range cmds {
			cmds[p] = pipe.HGet(ctx, a.space.Commit(topic, p), group)
		}
		return nil
	})
	out := make(map[int]string, n)
	for p, c := range cmds {
		switch err := c.Err(); {
		case err == nil:
			out[p] = c.Val()
		case !errors.Is(err, redis.Nil):
			return nil, fmt.Errorf("commit frontier of group %q on partition %d: %w", group, p, err)
		}
	}
	return out, nil
}
