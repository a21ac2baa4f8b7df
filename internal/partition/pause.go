package partition

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pause is a group's pause as an operator set it: Paused, and since when.
type Pause struct {
	Paused bool
	Since  time.Time
}

// PauseKey is the pause key of group on topic, or of the group consuming topic's DLQ.
func (r *Registry) PauseKey(topic, group string, dlq bool) string {
	if dlq {
		return r.space.DLQGroupPause(topic, group)
	}
	return r.space.GroupPause(topic, group)
}

// PauseGroup pauses the group of key at now; pausing a paused group keeps its start.
func (r *Registry) PauseGroup(ctx context.Context, key string, now time.Time) (Pause, error) {
	if err := r.rdb.SetNX(ctx, key, now.UnixMilli(), 0).Err(); err != nil {
		return Pause{}, fmt.Errorf("pause %s: %w", key, err)
	}
	return r.Paused(ctx, key)
}

// ResumeGroup ends the pause of key; true when it was paused.
func (r *Registry) ResumeGroup(ctx context.Context, key string) (bool, error) {
	n, err := r.rdb.Del(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("resume %s: %w", key, err)
	}
	return n > 0, nil
}

// Paused reads the pause of key. A value that is no Unix ms time still pauses, since the
// zero time.
func (r *Registry) Paused(ctx context.Context, key string) (Pause, error) {
	v, err := r.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return Pause{}, nil
	}
	if err != nil {
		return Pause{}, fmt.Errorf("read pause %s: %w", key, err)
	}
	return pauseOf(v), nil
}

// PausedAll is Paused for each of keys: one MGET, so keys of one topic (they share its tag).
func (r *Registry) PausedAll(ctx context.Context, keys []string) ([]Pause, error) {
	out := make([]Pause, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	vals, err := r.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("read pauses: %w", err)
	}
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[i] = pauseOf(s)
		}
	}
	return out, nil
}

// pauseOf is the pause a key's value records: its start in Unix ms.
func pauseOf(v string) Pause {
	p := Pause{Paused: true}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		p.Since = time.UnixMilli(ms)
	}
	return p
}
