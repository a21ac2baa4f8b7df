package consume

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/retention"
)

// redisErr is an error reply of Redis (go-redis's redis.Error).
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

const oom = redisErr("OOM command not allowed when used memory > 'maxmemory'.")

// fullStore is a partition's housekeeping steps on a Redis that refuses them for memory, or
// takes them once room is back.
type fullStore struct{ full bool }

func (s *fullStore) err() error {
	if s.full {
		return oom
	}
	return nil
}

func (s *fullStore) MarkSeen(context.Context, time.Time) (time.Time, error) {
	return time.Time{}, s.err()
}
func (s *fullStore) Trim(context.Context, retention.Rule) (retention.Trimmed, error) {
	return retention.Trimmed{}, s.err()
}
func (s *fullStore) TakeLosses(context.Context) (int64, error) { return 0, s.err() }
func (s *fullStore) PruneConsumers(context.Context, time.Duration, []string) ([]string, error) {
	return nil, s.err()
}
func (s *fullStore) TrimDLQBefore(context.Context, time.Time) (int64, error) { return 0, s.err() }
func (s *fullStore) TrimDLQLen(context.Context, int64) (int64, error)        { return 0, s.err() }
func (s *fullStore) SweepOrphans(context.Context, time.Time, int64, int64) (int, int64, error) {
	return 0, 0, s.err()
}

// While Redis refuses the housekeepers' steps for memory, the whole Consumer says so once, as
// information, not an error per step and partition; once a step goes through, the next full
// Redis is said again.
func TestHousekeepersSayOnceThatRedisIsFull(t *testing.T) {
	logs := watermill.NewCaptureLogger()
	full := &fullNotice{}
	store := &fullStore{full: true}
	keepers := make([]*housekeeper, 3)
	for i := range keepers {
		d := partDeps{log: logs, clock: clock.Real(), count: noCounters{}, stats: &counts{}, ctx: context.Background()}
		keepers[i] = &housekeeper{d: d, store: store, full: full,
			cfg:    Retention{MaxAge: time.Hour, DLQMaxAge: time.Hour, DLQMaxLen: 10},
			length: func() retention.Length { return retention.Length{MaxLen: 100} }, live: func() []string { return []string{"m"} },
			pressure: func() bool { return true }}
	}
	said := func() int {
		n := 0
		for _, m := range logs.Captured()[watermill.InfoLogLevel] {
			if strings.HasPrefix(m.Msg, "Redis is full") {
				n++
			}
		}
		return n
	}
	for range 3 {
		for _, h := range keepers {
			h.step()
		}
	}
	assert.Equal(t, 1, said(), "one line for every step and partition refused")
	assert.Empty(t, logs.Captured()[watermill.ErrorLogLevel], "no error per refused step")

	store.full = false
	keepers[0].step()
	store.full = true
	keepers[1].step()
	assert.Equal(t, 2, said(), "said again after room came back")
}
