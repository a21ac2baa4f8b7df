package streamq

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/publish"
)

// customMarshaler marshals a message to its UUID alone.
type customMarshaler struct{}

func (customMarshaler) Marshal(_ string, msg *message.Message) (map[string]any, error) {
	return map[string]any{"id": msg.UUID}, nil
}

// TestPublishConfigMapsEveryGroup: the engine's config of a Publisher carries each field of
// every publish group, the off values as the engine spells them (an Idempotency.Window of -1
// is 0, a GroupExpiry of -1 is 0, TrimHard is Hard), the routing and the marshaler.
func TestPublishConfigMapsEveryGroup(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never connected
	t.Cleanup(func() { _ = client.Close() })
	cfg := PublisherConfig{
		Client:                client,
		Keyspace:              Keyspace{StreamPrefix: "s", ControlPrefix: "c"},
		DefaultPartitionCount: 6,
		Marshaler:             customMarshaler{},
		Partitioning:          PartitioningConfig{RefreshInterval: 7 * time.Second},
		Trim:                  TrimConfig{MaxLen: 500, Exact: true, Policy: TrimHard, GroupExpiry: -1},
		Payloads:              PayloadConfig{Threshold: 128, TTL: time.Hour},
		Idempotency:           IdempotencyConfig{Window: -1},
		Pipeline:              PipelineConfig{MaxSize: 10, Flushers: 3, QueueSize: 20},
		Replication:           ReplicationConfig{MinReplicas: 2, Timeout: 5 * time.Millisecond},
		Memory:                MemoryWatch{Interval: -1},
	}
	cfg.setDefaults()
	require.NoError(t, cfg.Validate())
	got := publishConfig(cfg, watermill.NopLogger{})

	assert.Equal(t, keys.Space{Stream: "s", Control: "c"}, got.Space)
	assert.Same(t, client, got.Client)
	assert.Equal(t, 6, got.DefaultPartitionCount)
	assert.Equal(t, 7*time.Second, got.RefreshInterval)
	assert.Equal(t, 128, got.OffloadThreshold)
	assert.Equal(t, time.Hour, got.OffloadTTL)
	assert.Equal(t, publish.Idempotency{}, got.Idempotency, "-1: off")
	assert.Equal(t, publish.Pipeline{MaxSize: 10, Flushers: 3, QueueSize: 20}, got.Pipeline)
	assert.Equal(t, publish.Replicas{N: 2, Timeout: 5 * time.Millisecond}, got.Replicas)
	assert.Equal(t, publish.Trim{MaxLen: 500, Exact: true, Hard: true}, got.Trim, "GroupExpiry -1: off")
	assert.Same(t, health.CheckOf(client), got.Check, "the client's one check")
	assert.Nil(t, got.Memory, "Memory.Interval -1: not watched")
	require.NotNil(t, got.Marshal, "a custom marshaler is called")
	fields, err := got.Marshal("t", message.NewMessage("u-1", nil))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"id": "u-1"}, fields)
	msg := message.NewMessage("u", nil)
	msg.Metadata.Set(ForcePartitionMetadata, "5")
	part, err := got.Route("t", 6, msg)
	require.NoError(t, err)
	assert.Equal(t, 5, part, "the Publisher's routing")

	cfg = PublisherConfig{Client: client}
	cfg.setDefaults()
	got = publishConfig(cfg, watermill.NopLogger{})
	assert.Nil(t, got.Marshal, "DefaultMarshaler: the engine appends its fields in place")
	assert.Equal(t, publish.Idempotency{Window: defaultIdempotencyWindow}, got.Idempotency)
	assert.Equal(t, publish.Trim{MaxLen: defaultMaxLen, GroupExpiry: defaultGroupExpiry}, got.Trim)
	assert.Equal(t, publish.Replicas{}, got.Replicas)
	assert.NotNil(t, got.Memory, "memory watched by default")
}

// TestPublishErrorsOfTheEngine: the engine's errors are the API's, with the messages and
// wrapping they always had: a refusal at maxmemory is a *RedisFullError (ErrRedisFull,
// unwrapping to the server's reply), a WAIT that counted too few replicas a
// *ReplicationError, and a WAIT that failed ErrNotReplicated wrapping the failure.
func TestPublishErrorsOfTheEngine(t *testing.T) {
	t.Parallel()
	oom := errors.New(oomReply)
	err := redisFullError(publish.FullInfo{Topic: "t", Partition: 3, Server: "10.0.0.1:6379", UsedMemory: 3 << 20,
		MaxMemory: 2 << 20}, oom)
	assert.ErrorIs(t, err, ErrRedisFull)
	assert.ErrorIs(t, err, oom)
	var full *RedisFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, &RedisFullError{Topic: "t", Partition: 3, Server: "10.0.0.1:6379", UsedMemory: 3 << 20,
		MaxMemory: 2 << 20, Err: oom}, full)
	assert.Equal(t, `redis is full: Redis 10.0.0.1:6379 refused partition 3 of "t" at maxmemory (used memory 3.0 MiB `+
		`of maxmemory 2.0 MiB); it accepts publishes again once consumers drain it: `+oom.Error(), err.Error())

	want := publish.Replicas{N: 2, Timeout: 1500 * time.Millisecond}
	err = replicationError(want, 1, nil)
	assert.ErrorIs(t, err, ErrNotReplicated)
	var re *ReplicationError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, &ReplicationError{Wanted: 2, Acked: 1, Timeout: 1500 * time.Millisecond}, re)

	failed := errors.New("i/o timeout")
	err = replicationError(want, 0, failed)
	assert.ErrorIs(t, err, ErrNotReplicated)
	assert.ErrorIs(t, err, failed)
	assert.False(t, errors.As(err, &re), "no count to report")
	assert.Equal(t, "not replicated: WAIT 2 1500: i/o timeout", err.Error())
}

// wireMetrics records what a Publisher's engine counts through the metrics.
type wireMetrics struct {
	NoopMetrics
	mu       sync.Mutex
	produced []Labels
	dups     []Labels
	trimmed  map[string]int64 // by "topic/partition/kind"
	expired  []Labels
}

func (m *wireMetrics) Produced(topic string, p int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.produced = append(m.produced, Labels{Topic: topic, Partition: p})
}

func (m *wireMetrics) DuplicateDropped(topic string, p int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dups = append(m.dups, Labels{Topic: topic, Partition: p})
}

func (m *wireMetrics) Trimmed(l Labels, kind string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trimmed[l.Topic+"/"+strconv.Itoa(l.Partition)+"/"+kind] += n
}

func (m *wireMetrics) GroupExpired(l Labels) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expired = append(m.expired, l)
}

// TestPublishCountersBindMetrics: the engine's counters reach the MetricsCollector with the
// topic and partition as labels, and its optional reporters when it implements them; a
// collector without them counts no duplicates and no expiries, and nothing fails.
func TestPublishCountersBindMetrics(t *testing.T) {
	t.Parallel()
	m := &wireMetrics{trimmed: map[string]int64{}}
	c := newPublishCounters(m)
	c.Produced("t", 1)
	c.DuplicateDropped("t", 2)
	c.Trimmed("t", 3, "length", 40)
	c.Trimmed("t", 3, "length-unacked", 4)
	c.GroupExpired("t", 3, "g")
	assert.Equal(t, []Labels{{Topic: "t", Partition: 1}}, m.produced)
	assert.Equal(t, []Labels{{Topic: "t", Partition: 2}}, m.dups)
	assert.Equal(t, map[string]int64{"t/3/length": 40, "t/3/length-unacked": 4}, m.trimmed)
	assert.Equal(t, []Labels{{Topic: "t", Partition: 3, Group: "g"}}, m.expired)

	plain := newPublishCounters(NoopMetrics{})
	assert.Nil(t, plain.dups)
	plain.DuplicateDropped("t", 0)
	plain.GroupExpired("t", 0, "g")
}

// oomReply is the text of Redis's refusal at maxmemory.
const oomReply = "OOM command not allowed when used memory > 'maxmemory'."
