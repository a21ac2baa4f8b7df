package streamq_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// memoryRecorder is a MetricsCollector that records what a MemoryReporter is told.
type memoryRecorder struct {
	streamq.NoopMetrics
	mu    sync.Mutex
	reads []streamq.ServerMemory
}

var _ streamq.MemoryReporter = (*memoryRecorder)(nil)

func (r *memoryRecorder) RedisMemory(m streamq.ServerMemory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, m)
}

func (r *memoryRecorder) all() []streamq.ServerMemory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]streamq.ServerMemory(nil), r.reads...)
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

// A Publisher's and a Subscriber's watch, running on their own timers, log the crossing of
// the mark once and the fall back once over many readings, report each reading to the
// metrics, and the Subscriber's Stats show the last one.
func TestMemoryWatchOfPublisherAndSubscriber(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	logs, metrics := newCaptureLogger(), &memoryRecorder{}
	watch := streamq.MemoryWatch{Interval: 20 * time.Millisecond}
	pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Memory: watch, Metrics: metrics}, logs)
	cfg := streamqtest.FastSub(client, "g")
	cfg.Memory, cfg.Metrics = watch, metrics
	sub, err := streamq.NewSubscriber(cfg, logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	require.NoError(t, pub.Publish("watched", message.NewMessage(watermill.NewUUID(), []byte("x"))))
	require.NoError(t, sub.SubscribeInitialize("watched"))

	readsAfter := func(n int) { // both watches read n more times
		t.Helper()
		from := len(metrics.all())
		require.Eventually(t, func() bool { return len(metrics.all()) >= from+2*n }, 10*time.Second, 10*time.Millisecond)
	}
	setMaxMemory(t, client, 111)
	readsAfter(10)
	assert.Len(t, logs.matching("error", "passed the high-water mark"), 2, "once by the Publisher, once by the Subscriber")
	mem := sub.Stats().Memory
	require.Len(t, mem, 1)
	assert.True(t, mem[0].High)
	assert.Positive(t, mem[0].Max)

	setMaxMemory(t, client, 0)
	readsAfter(10)
	assert.Len(t, logs.matching("info", "fell back below the high-water mark"), 2)
	assert.Len(t, logs.matching("error", "passed the high-water mark"), 2)
	assert.False(t, sub.Stats().Memory[0].High)
}

// A server without maxmemory is logged once, whatever the number of Publishers and
// Subscribers of its client, naming the server; on a Cluster once per master.
func TestServerCheckWarnsOnceAboutNoMaxmemory(t *testing.T) {
	t.Parallel()
	t.Run("single", func(t *testing.T) {
		_, client := streamqtest.StartRedis(t)
		logs := watermill.NewCaptureLogger()
		for range 3 {
			pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2}, logs)
			require.NoError(t, pub.Publish("unbounded", message.NewMessage(watermill.NewUUID(), []byte("x"))))
		}
		sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), logs)
		require.NoError(t, err)
		t.Cleanup(func() { _ = sub.Close() })
		require.NoError(t, sub.SubscribeInitialize("unbounded"))
		warnings := capturedInfo(logs, "Redis has no maxmemory")
		require.Len(t, warnings, 1)
		assert.Equal(t, client.Options().Addr, warnings[0].Fields["server"])
		assert.Contains(t, warnings[0].Fields["fix"], "CONFIG SET maxmemory")
	})
	t.Run("bounded", func(t *testing.T) {
		_, client := streamqtest.StartRedis(t)
		require.NoError(t, client.ConfigSet(context.Background(), "maxmemory", "1gb").Err())
		logs := watermill.NewCaptureLogger()
		pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2}, logs)
		require.NoError(t, pub.Publish("bounded", message.NewMessage(watermill.NewUUID(), []byte("x"))))
		assert.Empty(t, capturedInfo(logs, "Redis has no maxmemory"))
	})
	t.Run("cluster", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts a cluster: not in -short")
		}
		cluster := redistest.StartCluster(t, 3, 0)
		client := cluster.Client(t)
		logs := watermill.NewCaptureLogger()
		for range 2 {
			pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, logs)
			require.NoError(t, pub.Publish("unbounded", message.NewMessage(watermill.NewUUID(), []byte("x"))))
		}
		masters, err := cluster.Masters()
		require.NoError(t, err)
		var named []string
		for _, w := range capturedInfo(logs, "Redis has no maxmemory") {
			named = append(named, w.Fields["server"].(string))
		}
		assert.ElementsMatch(t, masters, named, "once per master")
	})
}

// A Publisher that Redis refuses for memory notes it in the topic's refusal record: the first
// refusal time, kept while refusals go on (noted at most once a second), the last one, and a
// TTL that clears it after recovery. A publish that succeeds writes nothing there.
func TestPublishRefusedIsRecorded(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	t.Cleanup(func() { _ = client.ConfigSet(ctx, "maxmemory", "0").Err() })
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
	const topic = "refused"
	key := keys.New("", "").Refused(topic)
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	n, err := client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no record while publishes succeed")

	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	publish := func() {
		t.Helper()
		require.ErrorIs(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))), streamq.ErrRedisFull)
	}
	record := func() (since, last string) {
		t.Helper()
		v, err := client.HGetAll(ctx, key).Result()
		require.NoError(t, err)
		return v["since"], v["last"]
	}
	publish()
	since, last := record()
	require.NotEmpty(t, since)
	assert.Equal(t, since, last)
	ttl, err := client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Positive(t, ttl)
	assert.LessOrEqual(t, ttl, 15*time.Second)

	publish() // within a second: not noted again
	_, again := record()
	assert.Equal(t, last, again)
	time.Sleep(time.Second + 50*time.Millisecond) // past the once-a-second limit of the refusal notes
	publish()
	since2, last2 := record()
	assert.Equal(t, since, since2, "the first refusal is kept")
	assert.Greater(t, last2, last)
}
