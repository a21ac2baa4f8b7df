package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// noSuchKey reports the XINFO error of a stream that was never written.
func noSuchKey(err error) bool { return redis.HasErrorPrefix(err, "no such key") }

// invalidID reports Redis rejecting a stream id argument.
func invalidID(err error) bool { return redis.HasErrorPrefix(err, "Invalid stream ID") }

// serverTime is the Redis server's clock, the one stream ids and heartbeats are written with.
func (a *Admin) serverTime(ctx context.Context) (time.Time, error) {
	t, err := a.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read server time: %w", err)
	}
	return t, nil
}

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
