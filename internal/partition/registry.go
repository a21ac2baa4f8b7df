// Package partition keeps the topic registry (registry set, topic meta hash, partitions set)
// and the partition count cache used by publishers and subscribers.
package partition

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

//go:embed lua/register.lua
var registerSrc string

var registerScript = redis.NewScript(registerSrc)

// Registry reads and writes topic metadata.
type Registry struct {
	rdb   redis.UniversalClient
	space keys.Space
}

// NewRegistry returns a Registry over rdb.
func NewRegistry(rdb redis.UniversalClient, space keys.Space) *Registry {
	return &Registry{rdb: rdb, space: space}
}

// Register creates the topic with count partitions if it does not exist yet, adds it to the
// registry and returns its partition count (the stored one when the topic already exists).
func (r *Registry) Register(ctx context.Context, topic string, count int) (int, error) {
	prefix := r.space.Stream + ":{" + topic + ":p:"
	n, err := registerScript.Run(ctx, r.rdb, []string{r.space.Meta(topic), r.space.Partitions(topic)},
		count, prefix).Int()
	if err != nil {
		return 0, fmt.Errorf("register topic %q: %w", topic, err)
	}
	if err := r.rdb.SAdd(ctx, r.space.Registry(), topic).Err(); err != nil {
		return 0, fmt.Errorf("add topic %q to registry: %w", topic, err)
	}
	return n, nil
}

// Count reads a topic's partition count. A missing or unparseable value reads as 1; exists
// reports whether the meta hash had the field at all.
func (r *Registry) Count(ctx context.Context, topic string) (n int, exists bool, err error) {
	v, err := r.rdb.HGet(ctx, r.space.Meta(topic), "partitionCount").Result()
	if errors.Is(err, redis.Nil) {
		return 1, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read partition count of %q: %w", topic, err)
	}
	return ParseCount(v), true, nil
}

// ParseCount parses a stored partition count; anything but a positive integer reads as 1.
func ParseCount(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Grow raises a topic's partition count to n (never lowers it) and registers the new
// partition streams. It returns the resulting count.
func (r *Registry) Grow(ctx context.Context, topic string, n int) (int, error) {
	cur, _, err := r.Count(ctx, topic)
	if err != nil {
		return 0, err
	}
	if n <= cur {
		return cur, nil
	}
	if err := r.rdb.HSet(ctx, r.space.Meta(topic), "partitionCount", n).Err(); err != nil {
		return 0, fmt.Errorf("grow topic %q: %w", topic, err)
	}
	return r.Register(ctx, topic, n)
}
