package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/server"
)

// serverTime is the Redis server's clock, the one stream ids and heartbeats are written with.
func (a *Admin) serverTime(ctx context.Context) (time.Time, error) {
	return server.Time(ctx, a.rdb)
}

// ServerTime reads the Redis server's clock (TIME), the one stream ids, heartbeats and
// history samples are written with.
func (a *Admin) ServerTime(ctx context.Context) (time.Time, error) { return a.serverTime(ctx) }

// streams returns the stream keys of partitions [from, to) of topic, built by key.
func streams(key func(string, int) string, topic string, from, to int) []string {
	out := make([]string, 0, to-from)
	for p := from; p < to; p++ {
		out = append(out, key(topic, p))
	}
	return out
}

// checkGroup validates a consumer group name.
func checkGroup(group string) error {
	if err := keys.ValidateName("consumer group", group); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return nil
}
