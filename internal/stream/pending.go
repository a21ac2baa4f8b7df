package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pending is one delivered, unacked entry of a group (an XPENDING extended reply line).
type Pending struct {
	ID         string
	Consumer   string
	Idle       time.Duration
	Deliveries int64
}

// PendingSample reads, in one pipeline, the oldest count pending entries of group idle at
// least minIdle on each stream (XPENDING IDLE - + COUNT): out[i] holds those of streams[i].
// found is whether the group exists on any of them; where it does not (NOGROUP) it has none.
func PendingSample(ctx context.Context, rdb redis.UniversalClient, streams []string, group string, minIdle time.Duration, count int64) (out [][]Pending, found bool, err error) {
	cmds := make([]*redis.XPendingExtCmd, len(streams))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{
				Stream: s, Group: group, Idle: minIdle, Start: "-", End: "+", Count: count,
			})
		}
		return nil
	})
	out = make([][]Pending, len(streams))
	for i, c := range cmds {
		if err := c.Err(); err != nil && !IsNoGroup(err) {
			return nil, false, fmt.Errorf("pending of group %q on %s: %w", group, streams[i], err)
		}
		found = found || c.Err() == nil
		for _, e := range c.Val() {
			out[i] = append(out[i], Pending{ID: e.ID, Consumer: e.Consumer, Idle: e.Idle, Deliveries: e.RetryCount})
		}
	}
	return out, found, nil
}
