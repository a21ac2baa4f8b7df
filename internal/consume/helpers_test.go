package consume

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retry"
)

// Engine tests build a Consumer from a Config of their own: fast intervals, no metrics, and
// entries appended with XADD in DefaultMarshaler's format (no Publisher: it lives above).

var space = keys.New("", "")

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Bind(Labels) Counters { return noCounters{} }

type noCounters struct{}

func (noCounters) Consumed()                      {}
func (noCounters) Acked()                         {}
func (noCounters) Retried()                       {}
func (noCounters) DeadLettered()                  {}
func (noCounters) PayloadMissing()                {}
func (noCounters) HandleLatency(time.Duration)    {}
func (noCounters) BackpressureWait(time.Duration) {}
func (noCounters) InFlight(int)                   {}
func (noCounters) DLQReplay(time.Duration)        {}
func (noCounters) DLQDeleted(int)                 {}
func (noCounters) Trimmed(string, int64)          {}
func (noCounters) GroupExpired(string)            {}
func (noCounters) EligiblePartitions(int)         {}
func (noCounters) LeasedPartitions(int)           {}
func (noCounters) MaxLeasedPartitions(int)        {}
func (noCounters) Outage(Outage)                  {}
func (noCounters) Paused(time.Time)               {}
func (noCounters) Forget()                        {}

// fixedBackoff retries after the same wait every time.
type fixedBackoff time.Duration

func (b fixedBackoff) NextBackoff(int) time.Duration { return time.Duration(b) }

// testConfig is the config of member of group on client, with intervals short enough for
// tests to converge quickly and nacks retried at once, for ever.
func testConfig(client redis.UniversalClient, group, member string) Config {
	return Config{
		Client: client, Space: space, Group: group, Member: member,
		Membership: Membership{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond,
			RebalanceInterval: 150 * time.Millisecond, PartitionRefreshInterval: time.Second, GroupStartID: "0-0"},
		Read:     func(string) Read { return Read{BatchCount: 50, BlockTime: 50 * time.Millisecond} },
		Reclaim:  Reclaim{ScanInterval: time.Second, Idle: 3 * time.Second, BatchSize: 100},
		Dispatch: Dispatch{MaxInFlightPerPartition: 1, CloseTimeout: 2 * time.Second},
		Acks:     Acks{BatchSize: 100, FlushInterval: 20 * time.Millisecond, DeletePolicy: deleteNone, SetTTL: time.Hour},
		Retry: Retry{Backoff: fixedBackoff(0), MaxRetries: retry.Forever, MaxSnoozes: 100,
			OutageBackoff: time.Second, OutageMaxBackoff: 30 * time.Second, MoverInterval: 100 * time.Millisecond, MoverBatch: 100},
		Retention: Retention{TrimInterval: time.Minute},
		Payloads:  Payloads{Threshold: -1},
		Errors:    Errors{Closed: errClosed, NameInUse: errNameInUse},
		Metrics:   noMetrics{},
		Check:     health.CheckOf(client),
		Clock:     clock.Real(),
		Log:       watermill.NopLogger{},
	}
}

var (
	errClosed    = errorString("consumer closed")
	errNameInUse = errorString("name in use")
)

type errorString string

func (e errorString) Error() string { return string(e) }

// subscribe starts a Consumer of cfg on topic and returns it with its channel; it is closed
// when the test ends.
func subscribe(t *testing.T, cfg Config, topic string) (*Consumer, <-chan *message.Message) {
	t.Helper()
	c := New(cfg)
	t.Cleanup(c.Close)
	v, err := space.NewView(topic)
	require.NoError(t, err)
	ch, err := c.Subscribe(context.Background(), v)
	require.NoError(t, err)
	return c, ch
}

// createTopic registers topic with n partitions.
func createTopic(t *testing.T, client redis.UniversalClient, topic string, n int) {
	t.Helper()
	_, err := partition.NewRegistry(client, space).RegisterTopic(context.Background(), topic, n, nil)
	require.NoError(t, err)
}

// appendSeq appends messages from..to-1 of topic's partition p, each with metadata "seq".
func appendSeq(t *testing.T, client redis.UniversalClient, topic string, p, from, to int) []string {
	t.Helper()
	var ids []string
	for i := from; i < to; i++ {
		fields, err := codec.Encode(watermill.NewUUID(), map[string]string{"seq": strconv.Itoa(i)}, []byte("m"+strconv.Itoa(i)))
		require.NoError(t, err)
		id, err := client.XAdd(context.Background(), &redis.XAddArgs{Stream: space.PartitionStream(topic, p), Values: fields}).Result()
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// receive is the next message of ch, failing the test after 10 s.
func receive(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
		return nil
	}
}
