package streamq

import (
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/publish"
)

// The one seam between the API and the engine: each public config group becomes the engine's
// own plain config, MetricsCollector and Tracer become the engine's counters and hooks, and
// the engine's records become public types.

// publishConfig is the engine's config of a Publisher of c (defaulted and valid).
func publishConfig(c PublisherConfig, logger watermill.LoggerAdapter) publish.Config {
	return publish.Config{
		Client:                c.Client,
		Space:                 keys.New(c.Keyspace.StreamPrefix, c.Keyspace.ControlPrefix),
		DefaultPartitionCount: c.DefaultPartitionCount,
		RefreshInterval:       c.Partitioning.RefreshInterval,
		Route:                 router{partitioning: c.Partitioning, byUUID: c.Idempotency.on()}.route,
		Marshal:               marshalFunc(c.Marshaler),
		OffloadThreshold:      c.Payloads.Threshold,
		OffloadTTL:            c.Payloads.TTL,
		Idempotency:           publish.Idempotency{Window: max(c.Idempotency.Window, 0), ByUUID: c.Idempotency.ByUUID},
		Pipeline:              publish.Pipeline{MaxSize: c.Pipeline.MaxSize, Flushers: c.Pipeline.Flushers, QueueSize: c.Pipeline.QueueSize},
		Replicas:              publish.Replicas{N: c.Replication.MinReplicas, Timeout: c.Replication.Timeout},
		Trim: publish.Trim{MaxLen: c.Trim.MaxLen, Exact: c.Trim.Exact, Hard: c.Trim.Policy == TrimHard,
			GroupExpiry: groupExpiryOf(c.Trim.GroupExpiry)},
		Counters: newPublishCounters(c.Metrics),
		Errors:   publish.Errors{Full: redisFullError, NotReplicated: replicationError},
		Check:    health.CheckOf(c.Client),
		Memory:   newMemoryWatch(c.Client, c.Memory, logger, c.Metrics),
		Logger:   logger,
		Clock:    clock.Real(),
	}
}

// marshalFunc is m as the engine takes it: nil for DefaultMarshaler, whose fields the engine
// appends to the XADD in place.
func marshalFunc(m Marshaler) func(topic string, msg *message.Message) (map[string]any, error) {
	if _, ok := m.(DefaultMarshaler); ok {
		return nil
	}
	return m.Marshal
}

// publishCounters are a Publisher's metrics as the engine counts them.
type publishCounters struct {
	m    MetricsCollector
	dups DuplicateReporter // nil: duplicates are not counted
}

func newPublishCounters(m MetricsCollector) *publishCounters {
	dups, _ := m.(DuplicateReporter)
	return &publishCounters{m: m, dups: dups}
}

func (c *publishCounters) Produced(topic string, p int) { c.m.Produced(topic, p) }

func (c *publishCounters) DuplicateDropped(topic string, p int) {
	if c.dups != nil {
		c.dups.DuplicateDropped(topic, p)
	}
}

func (c *publishCounters) Trimmed(topic string, p int, kind string, n int64) {
	trimReporter{c.m, Labels{Topic: topic, Partition: p}}.Trimmed(kind, n)
}

func (c *publishCounters) GroupExpired(topic string, p int, group string) {
	trimReporter{c.m, Labels{Topic: topic, Partition: p}}.GroupExpired(group)
}

// redisFullError is the ErrRedisFull of a write Redis refused at maxmemory with err.
func redisFullError(f publish.FullInfo, err error) error {
	return &RedisFullError{Topic: f.Topic, Partition: f.Partition, Server: f.Server, UsedMemory: f.UsedMemory,
		MaxMemory: f.MaxMemory, Err: err}
}

// replicationError is the ErrNotReplicated of a pipeline whose WAIT for want counted acked
// replicas, or failed with err.
func replicationError(want publish.Replicas, acked int, err error) error {
	if err != nil {
		return fmt.Errorf("%w: WAIT %d %d: %w", ErrNotReplicated, want.N, want.Timeout.Milliseconds(), err)
	}
	return &ReplicationError{Wanted: want.N, Acked: acked, Timeout: want.Timeout}
}

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
