package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Time is the Redis server's clock (TIME), the one stream ids and heartbeats are written with.
func Time(ctx context.Context, rdb redis.UniversalClient) (time.Time, error) {
	t, err := rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read server time: %w", err)
	}
	return t, nil
}
