// Package exampleredis connects the examples to Redis: REDIS_URL, or, when it is unset, an
// embedded Redis (miniredis) for the examples that run on one, localhost:6379 for the others.
package exampleredis

import (
	"context"
	"fmt"
	"os"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Connect opens REDIS_URL and checks that it answers. When REDIS_URL is unset it starts an
// embedded miniredis, which lives as long as the program, and says so on stderr.
func Connect(ctx context.Context) (*redis.Client, error) {
	client, _, err := ConnectShared(ctx)
	return client, err
}

// ConnectShared is Connect, and returns the URL of the Redis it opened, for child processes
// to connect to: an embedded one listens on a loopback port as long as the program lives.
func ConnectShared(ctx context.Context) (*redis.Client, string, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, "", fmt.Errorf("start an embedded Redis: %w", err)
		}
		mr.ClockTTL(true) // keys expire as time goes by, as in Redis (leases of a killed process)
		url = "redis://" + mr.Addr()
		fmt.Fprintf(os.Stderr, "REDIS_URL is unset: using an embedded Redis (miniredis) at %s\n", mr.Addr())
	}
	client, err := dial(ctx, url)
	return client, url, err
}

// ConnectServer opens REDIS_URL, or redis://localhost:6379 when it is unset, for the examples
// that need a Redis server: why says what the embedded Redis lacks for them.
func ConnectServer(ctx context.Context, why string) (*redis.Client, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://localhost:6379"
	}
	client, err := dial(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("%w (this example needs a Redis server, %s: set REDIS_URL)", err, why)
	}
	return client, nil
}

// dial opens url and checks that it answers.
func dial(ctx context.Context, url string) (*redis.Client, error) {
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
