package health

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/server"
)

// readings records what a Watch reports.
type readings struct {
	mu  sync.Mutex
	all []Reading
}

func (r *readings) add(m Reading) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, m)
}

func (r *readings) list() []Reading {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Reading(nil), r.all...)
}

// setMaxMemory sets the server's maxmemory (noeviction) to its used memory times percent/100
// (0: no maxmemory).
func setMaxMemory(t *testing.T, client *redis.Client, percentOfUsed int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	limit := int64(0)
	if percentOfUsed > 0 {
		m := server.MemoryOfKey(ctx, client, "")
		require.NoError(t, m.Err)
		limit = m.Used * percentOfUsed / 100
	}
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err())
}

func countLogs(logs *watermill.CaptureLoggerAdapter, level watermill.LogLevel, part string) int {
	n := 0
	for _, m := range logs.Captured()[level] {
		if strings.Contains(m.Msg, part) {
			n++
		}
	}
	return n
}

// The watch logs each change of level once, whatever the number of readings that see it:
// passing the high-water mark, a full Redis, room again above the mark, falling back. Each
// reading is reported and kept for Status.
func TestWatchLogsEachCrossingOnce(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	logs, got := watermill.NewCaptureLogger(), &readings{}
	w := NewWatch(client, WatchConfig{HighWater: 0.8, Interval: time.Hour}, logs, clock.Real(), got.add)
	addr := client.Options().Addr
	poll := func(n int) {
		t.Helper()
		for range n {
			require.True(t, w.check())
		}
	}
	count := func(level watermill.LogLevel, part string) int { return countLogs(logs, level, part) }

	poll(3) // no maxmemory: nothing to pass
	assert.Zero(t, count(watermill.ErrorLogLevel, "high-water mark")+count(watermill.InfoLogLevel, "fell back"))
	assert.False(t, w.Pressure())

	steps := []struct {
		name                           string
		percentOfUsed                  int64 // maxmemory as a share of used memory; 0: none
		high, full                     bool
		passed, isFull, room, fellBack int
	}{
		{"above the mark (used at 90 %)", 111, true, false, 1, 0, 0, 0},
		{"full (used at twice maxmemory)", 50, true, true, 1, 1, 0, 0},
		{"room again, above the mark", 111, true, false, 1, 1, 1, 0},
		{"fell back (used at 10 %)", 1000, false, false, 1, 1, 1, 1},
		{"no maxmemory again", 0, false, false, 1, 1, 1, 1},
	}
	for _, s := range steps {
		setMaxMemory(t, client, s.percentOfUsed)
		poll(4)
		assert.Equal(t, s.passed, count(watermill.ErrorLogLevel, "passed the high-water mark"), s.name)
		assert.Equal(t, s.isFull, count(watermill.ErrorLogLevel, "Redis is full"), s.name)
		assert.Equal(t, s.room, count(watermill.InfoLogLevel, "has room again"), s.name)
		assert.Equal(t, s.fellBack, count(watermill.InfoLogLevel, "fell back below the high-water mark"), s.name)
		status := w.Status()
		require.Len(t, status, 1, s.name)
		assert.Equal(t, addr, status[0].Addr)
		assert.Equal(t, s.high, status[0].High, s.name)
		assert.Equal(t, s.full, !status[0].FullSince.IsZero(), s.name)
		assert.Equal(t, s.high, w.Pressure(), s.name)
		reads := got.list()
		assert.Equal(t, status[0], reads[len(reads)-1], "%s: the report gets the last reading", s.name)
	}
	for _, m := range logs.Captured()[watermill.ErrorLogLevel] {
		if strings.Contains(m.Msg, "passed the high-water mark") {
			assert.Equal(t, addr, m.Fields["server"])
			assert.Equal(t, 80, m.Fields["high_water_percent"])
		}
	}
	assert.Len(t, got.list(), 3+4*len(steps), "one report per reading")
}

// A refused publish is pressure at once, until a reading finds room.
func TestWatchRefusedIsPressureUntilRoom(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	w := NewWatch(client, WatchConfig{HighWater: 0.8, Interval: time.Hour}, watermill.NopLogger{}, clock.Real(), nil)
	assert.False(t, w.Pressure())
	w.Refused()
	assert.True(t, w.Pressure(), "refused: pressure before the next reading")
	require.True(t, w.check())
	assert.False(t, w.Pressure(), "a reading with room ends it")
}

// Start and Stop: Stop returns with the loop gone, twice is fine, and a watch never started
// stops at once.
func TestWatchStartStop(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	w := NewWatch(client, WatchConfig{Interval: 10 * time.Millisecond}, watermill.NopLogger{}, clock.Real(), nil)
	w.Start()
	w.Start()
	require.Eventually(t, func() bool { return len(w.Status()) == 1 }, 5*time.Second, 10*time.Millisecond)
	w.Stop()
	w.Stop()
	NewWatch(client, WatchConfig{Interval: time.Second}, watermill.NopLogger{}, clock.Real(), nil).Stop()
}
