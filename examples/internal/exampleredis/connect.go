// Package exampleredis connects the examples to Redis: REDIS_URL, or localhost:6379.
package exampleredis

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
)

// Connect opens REDIS_URL, or redis://localhost:6379 when it is unset, and checks that it
// answers.
func Connect(ctx context.Context) (*redis.Client, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://localhost:6379"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("redis at %s: %w", url, err)
	}
	return client, nil
}
