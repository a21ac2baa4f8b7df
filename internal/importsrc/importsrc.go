// Package importsrc holds the Redis commands of an import from a plain Redis stream, such as
// a watermill-redisstream topic (the stream key is the topic name), into a streamq topic:
// what a consumer group still holds there (its pending entries, delivered and not acked, and
// the entries after its last-delivered id), taking and acking them as a consumer of that
// group, and the import's checkpoint and lock under the control prefix.
package importsrc

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/stream"
)

var (
	// ErrNoStream reports a source stream that does not exist.
	ErrNoStream = errors.New("no such stream")
	// ErrNoGroup reports a consumer group the source stream does not have.
	ErrNoGroup = errors.New("no such consumer group")
)

// Snapshot is where a consumer group of a source stream stands.
type Snapshot struct {
	// LastDelivered is the group's last-delivered id: every entry up to it was delivered,
	// and is acked or pending.
	LastDelivered string
	// Pending is the number of entries delivered to the group and not acked.
	Pending int64
	// Lag is the number of entries after LastDelivered as Redis counts it; -1 when Redis
	// cannot tell (after deletions, trimming or XGROUP SETID).
	Lag int64
	// End is the id of the stream's newest entry ("" when the stream is empty).
	End string
}

// Take reads, in one pipeline, where group stands on src (XINFO GROUPS and XINFO STREAM):
// ErrNoStream or ErrNoGroup when either is missing.
func Take(ctx context.Context, rdb redis.UniversalClient, src, group string) (Snapshot, error) {
	var groups func() ([]stream.GroupInfo, error)
	var info func() (*stream.Info, error)
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		groups = stream.QueueGroups(ctx, pipe, src)
		info = stream.QueueInfo(ctx, pipe, src)
		return nil
	})
	si, err := info()
	if err != nil {
		return Snapshot{}, fmt.Errorf("read stream %q: %w", src, err)
	}
	if si == nil {
		return Snapshot{}, fmt.Errorf("%w: %q", ErrNoStream, src)
	}
	gs, err := groups()
	if err != nil {
		return Snapshot{}, fmt.Errorf("read groups of stream %q: %w", src, err)
	}
	g, ok := stream.Find(gs, group)
	if !ok {
		return Snapshot{}, fmt.Errorf("%w: %q on stream %q", ErrNoGroup, group, src)
	}
	return Snapshot{LastDelivered: g.LastDelivered, Pending: g.Pending, Lag: g.Lag, End: si.LastID}, nil
}
