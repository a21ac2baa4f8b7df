// Package admin operates streamq topics, consumer groups and dead-letter queues: the
// operations Watermill does not model. It is a thin layer over the same internals the
// Publisher and Subscriber use, so it reads and writes exactly their keys.
//
// Every method takes a context, is safe for concurrent use, and reports an unknown topic with
// ErrTopicNotFound rather than an empty result.
package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

var (
	// ErrTopicNotFound reports a topic that is not registered.
	ErrTopicNotFound = errors.New("topic not found")
	// ErrEntryNotFound reports a stream or DLQ entry id that does not exist.
	ErrEntryNotFound = errors.New("entry not found")
	// ErrInvalidArgument reports a bad argument (partition out of range, bad id).
	ErrInvalidArgument = errors.New("invalid argument")
)

// Options configures an Admin. Zero values mean the library defaults.
type Options struct {
	// Keyspace must match the Publishers' and Subscribers'. Optional; default the library's.
	Keyspace streamq.Keyspace
	// Metrics receives the DLQ operations' metrics. Optional; default none. Any
	// streamq.MetricsCollector (such as metrics/prometheus.Collector) fits.
	Metrics DLQMetrics
	// Payloads must match the Publishers' Payloads: a replayed dead letter whose payload is
	// over the threshold has it stored in its own key again, with that TTL, as a publish
	// does. Optional; defaults 64 KiB (-1: keep replayed payloads inline) and 0 (no TTL).
	Payloads streamq.PayloadConfig
	// MemoryHighWater is the fraction of Redis's maxmemory (above 0, at most 1) at which
	// ServerMemory.High is set; it should match the Publishers' and Subscribers'
	// Memory.HighWater. Optional; default DefaultMemoryHighWater (0.8); -1: none (only a full
	// server is High).
	MemoryHighWater float64
}

// DLQMetrics receives the metrics of admin's DLQ operations (a subset of
// streamq.MetricsCollector).
type DLQMetrics interface {
	DLQDeleted(topic string, n int)
	DLQCleared(topic string, n int)
	DLQReplay(topic string, d time.Duration)
}

type noMetrics struct{}

func (noMetrics) DLQDeleted(string, int)          {}
func (noMetrics) DLQCleared(string, int)          {}
func (noMetrics) DLQReplay(string, time.Duration) {}

// Admin runs operations on one Redis (single node, Sentinel or Cluster).
type Admin struct {
	metrics DLQMetrics
	offload offloading
	rdb     redis.UniversalClient
	space   keys.Space
	reg     *partition.Registry
	// highWater is Options.MemoryHighWater, 0 for none.
	highWater float64
}

// New returns an Admin over client. It never closes client.
func New(client redis.UniversalClient, opts Options) (*Admin, error) {
	if server.IsNil(client) {
		return nil, fmt.Errorf("%w: client is required (got %T)", ErrInvalidArgument, client)
	}
	if opts.Payloads.Threshold < -1 || opts.Payloads.TTL < 0 {
		return nil, fmt.Errorf("%w: Payloads.Threshold must be > 0, 0 (default) or -1 (off) and Payloads.TTL not negative, got %d and %s",
			ErrInvalidArgument, opts.Payloads.Threshold, opts.Payloads.TTL)
	}
	if h := opts.MemoryHighWater; h != 0 && h != -1 && (h < 0 || h > 1) {
		return nil, fmt.Errorf("%w: MemoryHighWater must be above 0 and at most 1, 0 (default) or -1 (none), got %v", ErrInvalidArgument, h)
	}
	if opts.Payloads.Threshold == 0 {
		opts.Payloads.Threshold = payload.DefaultThreshold
	}
	script.Compat(client) // scripts on a server without shebang lines (miniredis)
	space := keys.New(opts.Keyspace.StreamPrefix, opts.Keyspace.ControlPrefix)
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	return &Admin{rdb: client, space: space, reg: partition.NewRegistry(client, space), metrics: opts.Metrics,
		offload: offloading{threshold: opts.Payloads.Threshold, ttl: opts.Payloads.TTL}, highWater: highWaterOf(opts.MemoryHighWater)}, nil
}

// highWaterOf is the high-water fraction of Options.MemoryHighWater: the default for 0, 0
// (none) for -1.
func highWaterOf(h float64) float64 {
	switch h {
	case 0:
		return DefaultMemoryHighWater
	case -1:
		return 0
	}
	return h
}

// ListTopics returns the registered topics.
func (a *Admin) ListTopics(ctx context.Context) ([]string, error) {
	return a.reg.Topics(ctx)
}

// partitions returns a registered topic's partition count, or ErrTopicNotFound.
func (a *Admin) partitions(ctx context.Context, topic string) (int, error) {
	m, err := a.topicMeta(ctx, topic)
	return m.Count, err
}

// topicMeta reads a registered topic's metadata hash (partition count, recorded length
// retention) in one round trip, or ErrTopicNotFound.
func (a *Admin) topicMeta(ctx context.Context, topic string) (partition.Meta, error) {
	if err := keys.ValidateName("topic", topic); err != nil {
		return partition.Meta{}, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	m, err := a.reg.Meta(ctx, topic)
	if err != nil {
		return partition.Meta{}, err
	}
	if !m.Exists {
		ok, err := a.reg.Registered(ctx, topic)
		if err != nil {
			return partition.Meta{}, err
		}
		if !ok {
			return partition.Meta{}, fmt.Errorf("%w: %q", ErrTopicNotFound, topic)
		}
	}
	return m, nil
}

func (a *Admin) checkPartition(topic string, p, n int) error {
	if p < 0 || p >= n {
		return fmt.Errorf("%w: partition %d of %q (it has %d)", ErrInvalidArgument, p, topic, n)
	}
	return nil
}
