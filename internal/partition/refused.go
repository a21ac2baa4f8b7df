package partition

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
)

// RefusalTTL is how long a topic's refusal record outlives the last refusal it noted: a
// Publisher refused for memory notes it at most once a second per topic (while its callers go
// on publishing), so the record stays while refusals go on and is gone this long after the
// last one.
const RefusalTTL = 15 * time.Second

var (
	//go:embed lua/refused.lua
	refusedSrc    string
	refusedScript = script.New(refusedSrc)
)

// Refusal is a topic's refusal record: when Redis first refused a publish to it for memory,
// and when last. Both zero when no publish was refused within RefusalTTL.
type Refusal struct {
	Since, Last time.Time
}

// Refused reports whether the record says publishes were refused.
func (r Refusal) Refused() bool { return !r.Since.IsZero() }

// NoteRefused records that Redis refused a publish to topic for memory (allow-oom: it runs
// on a full Redis) and returns since when publishes to it are refused.
func (r *Registry) NoteRefused(ctx context.Context, topic string) (time.Time, error) {
	ms, err := refusedScript.Run(ctx, r.rdb, []string{r.space.Refused(topic)}, RefusalTTL.Milliseconds()).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("note the refused publish to %q: %w", topic, err)
	}
	return time.UnixMilli(ms), nil
}

// Refusal reads topic's refusal record (zero when there is none).
func (r *Registry) Refusal(ctx context.Context, topic string) (Refusal, error) {
	v, err := r.rdb.HMGet(ctx, r.space.Refused(topic), "since", "last").Result()
	if errors.Is(err, redis.Nil) {
		return Refusal{}, nil
	}
	if err != nil {
		return Refusal{}, fmt.Errorf("read the refused publishes of %q: %w", topic, err)
	}
	return Refusal{Since: unixMilliOf(v[0]), Last: unixMilliOf(v[1])}, nil
}

// unixMilliOf reads a hash field of Unix ms; nil or what does not parse is the zero time.
func unixMilliOf(v any) time.Time {
	s, _ := v.(string)
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
