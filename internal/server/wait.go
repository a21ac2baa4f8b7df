package server

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// QueueWait adds WAIT replicas timeout to pipe, after the writes it must cover. WAIT counts
// the replicas that acknowledged every write sent before it on the same connection, so it
// must ride the writes' pipeline: go-redis sends a single-node pipeline on one connection. A
// Cluster pipeline routes a keyless WAIT to any node, so it must not be used there. timeout
// must be at least a millisecond (WAIT 0 blocks for ever).
func QueueWait(ctx context.Context, pipe redis.Pipeliner, replicas int, timeout time.Duration) *redis.IntCmd {
	cmd := redis.NewIntCmd(ctx, "wait", replicas, timeout.Milliseconds())
	_ = pipe.Process(ctx, cmd)
	return cmd
}
