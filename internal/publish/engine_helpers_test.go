package publish

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/health"
)

// testCounters counts what an engine did, by partition.
type testCounters struct {
	mu       sync.Mutex
	produced map[int]int
	dups     map[int]int
	trimmed  map[string]int64 // by kind
	expired  []string
}

func newTestCounters() *testCounters {
	return &testCounters{produced: map[int]int{}, dups: map[int]int{}, trimmed: map[string]int64{}}
}

func (c *testCounters) Produced(_ string, p int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.produced[p]++
}

func (c *testCounters) DuplicateDropped(_ string, p int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dups[p]++
}

func (c *testCounters) Trimmed(_ string, _ int, kind string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trimmed[kind] += n
}

func (c *testCounters) GroupExpired(_ string, _ int, group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expired = append(c.expired, group)
}

var (
	errTestFull          = errors.New("test: redis is full")
	errTestNotReplicated = errors.New("test: not replicated")
)

// testFullError is what testErrors builds of a refusal at maxmemory.
type testFullError struct {
	where FullInfo
	err   error
}

func (e *testFullError) Error() string {
	return fmt.Sprintf("%v: %+v: %v", errTestFull, e.where, e.err)
}
func (e *testFullError) Is(target error) bool { return target == errTestFull }
func (e *testFullError) Unwrap() error        { return e.err }

// testReplicationError is what testErrors builds of a WAIT that fell short.
type testReplicationError struct {
	want  Replicas
	acked int
	err   error
}

func (e *testReplicationError) Error() string {
	return fmt.Sprintf("%v: %d of %d: %v", errTestNotReplicated, e.acked, e.want.N, e.err)
}
func (e *testReplicationError) Unwrap() []error { return []error{errTestNotReplicated, e.err} }

var testErrors = Errors{
	Full: func(where FullInfo, err error) error { return &testFullError{where, err} },
	NotReplicated: func(want Replicas, acked int, err error) error {
		return &testReplicationError{want: want, acked: acked, err: err}
	},
}

// testRoute routes a message to its forced partition (codec.HeaderForcePartition), else to
// the partition of its UUID, as the API routes a message without a key under idempotency.
func testRoute(topic string, n int, msg *message.Message) (int, error) {
	if forced := msg.Metadata.Get(codec.HeaderForcePartition); forced != "" {
		p, err := strconv.Atoi(forced)
		if err != nil || p < 0 || p >= n {
			return 0, fmt.Errorf("topic %q: no partition %q of %d", topic, forced, n)
		}
		return p, nil
	}
	return KafkaPartition([]byte(msg.UUID), n), nil
}

// testConfig is the config of an engine on client as a Publisher with the default config
// has it (no memory watch, no length retention), counting into counters.
func testConfig(client redis.UniversalClient, counters Counters) Config {
	return Config{
		Client: client, Space: space, RefreshInterval: 30 * time.Second, Route: testRoute,
		OffloadThreshold: 64 * 1024,
		Idempotency:      Idempotency{Window: window},
		Pipeline:         Pipeline{MaxSize: 1000, Flushers: 2, QueueSize: 4096},
		Trim:             Trim{MaxLen: -1},
		Counters:         counters, Errors: testErrors, Check: health.CheckOf(client),
		Logger: watermill.NopLogger{}, Clock: clock.Real(),
	}
}

// newTestEngine is an engine of testConfig changed by tune (nil: as is), closed when the test
// ends, with its counters.
func newTestEngine(t testing.TB, client redis.UniversalClient, tune func(*Config)) (*Engine, *testCounters) {
	t.Helper()
	counters := newTestCounters()
	cfg := testConfig(client, counters)
	if tune != nil {
		tune(&cfg)
	}
	e := New(cfg)
	t.Cleanup(e.Close)
	return e, counters
}

// publishAll publishes msgs to topic as the API does, with the first message's context
// (the tests give every message of a call the same).
func publishAll(e *Engine, topic string, msgs ...*message.Message) error {
	return e.Publish(msgs[0].Context(), topic, msgs)
}

// storedEntry is one entry of a partition as XRANGE lists it.
type storedEntry struct {
	partition int
	id        string
}

// storedByUUID reads every partition of topic with XRANGE: each message's entries by UUID,
// in the order they were appended.
func storedByUUID(t *testing.T, client redis.UniversalClient, topic string, partitions int) map[string][]storedEntry {
	t.Helper()
	out := map[string][]storedEntry{}
	for p := range partitions {
		es, err := client.XRange(context.Background(), space.PartitionStream(topic, p), "-", "+").Result()
		require.NoError(t, err)
		for _, e := range es {
			uuid, _ := e.Values[codec.UUIDField].(string)
			out[uuid] = append(out[uuid], storedEntry{partition: p, id: e.ID})
		}
	}
	return out
}
