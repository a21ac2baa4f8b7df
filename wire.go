package streamq

import (
	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
)

// The one seam between the API and the engine: each public config group becomes the engine's
// own plain config, MetricsCollector and Tracer become the engine's counters and hooks, and
// the engine's records become public types.

// newMemoryWatch is the memory watch of a Publisher or Subscriber (nil when Memory.Interval is
// -1); metrics that implement MemoryReporter get every reading.
func newMemoryWatch(rdb redis.UniversalClient, cfg MemoryWatch, log watermill.LoggerAdapter, metrics MetricsCollector) *health.Watch {
	if !cfg.watched() {
		return nil
	}
	var report func(health.Reading)
	if r, ok := metrics.(MemoryReporter); ok {
		report = func(m health.Reading) { r.RedisMemory(serverMemoryOf(m)) }
	}
	return health.NewWatch(rdb, health.WatchConfig{HighWater: cfg.mark(), Interval: cfg.Interval}, log, clock.Real(), report)
}

// serverMemoryOf is a memory reading as the API shows it.
func serverMemoryOf(m health.Reading) ServerMemory {
	return ServerMemory{Addr: m.Addr, Used: m.Used, Max: m.Max, High: m.High, FullSince: m.FullSince}
}

// serverMemories are the memory watch's last readings, nil when memory is not watched.
func serverMemories(w *health.Watch) []ServerMemory {
	if w == nil {
		return nil
	}
	rs := w.Status()
	out := make([]ServerMemory, len(rs))
	for i, r := range rs {
		out[i] = serverMemoryOf(r)
	}
	return out
}

// trimReporter counts one partition's trims in the metrics (labels l) and its group expiries
// in a GroupExpiryReporter.
type trimReporter struct {
	m MetricsCollector
	l Labels
}

func (r trimReporter) Trimmed(kind string, n int64) { r.m.Trimmed(r.l, kind, n) }

func (r trimReporter) GroupExpired(group string) {
	if g, ok := r.m.(GroupExpiryReporter); ok {
		g.GroupExpired(Labels{Topic: r.l.Topic, Partition: r.l.Partition, Group: group})
	}
}
