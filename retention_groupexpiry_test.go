package streamq_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// expiryMetrics records the group expiries reported to it.
type expiryMetrics struct {
	streamq.NoopMetrics
	mu      sync.Mutex
	expired []streamq.Labels
}

func (m *expiryMetrics) GroupExpired(l streamq.Labels) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expired = append(m.expired, l)
}

func (m *expiryMetrics) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.expired)
}

// expiryEnv is one topic of one partition with a length retention of 10 (exact), a group
// "forgotten" registered with SubscribeInitialize that does not consume, and a group "live"
// that acks everything and trims every 200ms; every member and the publisher share expiry.
type expiryEnv struct {
	t         *testing.T
	client    redis.UniversalClient
	topic     string
	stream    string
	space     keys.Space
	pub       *streamq.Publisher
	forgotten *streamq.Subscriber
	metrics   *expiryMetrics
	logs      *captureLogger
}

func newExpiryEnv(t *testing.T, client redis.UniversalClient, topic string, expiry time.Duration) *expiryEnv {
	e := &expiryEnv{t: t, client: client, topic: topic, space: keys.New("", ""), metrics: &expiryMetrics{}, logs: newCaptureLogger()}
	e.stream = e.space.PartitionStream(topic, 0)
	e.forgotten = streamqtest.NewSubscriber(t, e.subConfig("forgotten", expiry))
	require.NoError(t, e.forgotten.SubscribeInitialize(topic))
	live, err := streamq.NewSubscriber(e.subConfig("live", expiry), e.logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = live.Close() })
	ch, err := live.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	ackAll(ch)
	e.pub, err = streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Trim: streamq.TrimConfig{MaxLen: 10, Exact: true, GroupExpiry: expiry},
		Metrics: e.metrics}, e.logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.pub.Close() })
	return e
}

func (e *expiryEnv) subConfig(group string, expiry time.Duration) streamq.SubscriberConfig {
	cfg := streamqtest.FastSub(e.client, group)
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	cfg.Membership.PartitionRefreshInterval = 100 * time.Millisecond
	cfg.Retention.GroupExpiry = expiry
	cfg.Metrics = e.metrics
	return cfg
}

// publish publishes n messages from seq from and waits until group live acked them.
func (e *expiryEnv) publish(from, n int) {
	require.NoError(e.t, e.pub.Publish(e.topic, seqMessages(from, n, nil)...))
	entries := streamEntries(e.t, e.client, e.stream)
	waitCommit(e.t, e.client, e.topic, 0, "live", entries[len(entries)-1].ID)
}

// holds asserts that the partition keeps at least n entries until deadline.
func (e *expiryEnv) holds(n int64, deadline time.Time) {
	e.t.Helper()
	for time.Now().Before(deadline) {
		require.GreaterOrEqual(e.t, streamqtest.XLen(e.t, e.client, e.stream), n, "trimmed before the group expired")
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *expiryEnv) waitLen(n int64, why string) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { return streamqtest.XLen(e.t, e.client, e.stream) == n }, 20*time.Second, 20*time.Millisecond,
		"%s: length %d, want %d", why, streamqtest.XLen(e.t, e.client, e.stream), n)
}

func (e *expiryEnv) hash(key string) map[string]string {
	m, err := e.client.HGetAll(context.Background(), key).Result()
	require.NoError(e.t, err)
	return m
}

// TestGroupExpiry: a group registered and never consumed holds retention back for the group
// expiry, then no longer: the partition is trimmed past it, what it lost counted; the trim
// that found it expired logs and counts it once. When it comes back it gets what is left, is
// told what it lost (Stats().TrimmedUnacked), and holds retention back again, until it
// expires again.
func TestGroupExpiry(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testGroupExpiry)
}

func testGroupExpiry(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const expiry = 2 * time.Second
	e := newExpiryEnv(t, client, "expiry", expiry)
	start := time.Now() // no trim saw group forgotten before: its expiry runs from a later time
	e.publish(0, 100)
	e.holds(100, start.Add(expiry-500*time.Millisecond))

	e.waitLen(10, "trimmed past the expired group")
	assert.Equal(t, []int{90, 91, 92, 93, 94, 95, 96, 97, 98, 99}, seqsOf(t, streamEntries(t, client, e.stream)))
	assert.Equal(t, map[string]string{"total:forgotten": "90", "new:forgotten": "90"}, e.hash(e.space.TrimLoss(e.topic, 0)),
		"the expired group lost the 90 entries it never read; group live none")
	seen := e.hash(keys.GroupSeen(e.stream))
	assert.Contains(t, seen, "expired:forgotten")
	assert.Contains(t, seen, "seen:live")
	assert.NotContains(t, seen, "expired:live")
	require.Eventually(t, func() bool { return e.metrics.count() == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, streamq.Labels{Topic: e.topic, Partition: 0, Group: "forgotten"}, e.metrics.expired[0])
	<-time.After(600 * time.Millisecond) // a few more trims: reported once
	assert.Equal(t, 1, e.metrics.count())
	assert.Len(t, e.logs.matching("info", "Consumer group expired"), 1)

	// It comes back: the entries left, and what it lost.
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := e.forgotten.Subscribe(ctx, e.topic)
	require.NoError(t, err)
	var seqs []int
	for range 10 {
		m := nextMsg(t, ch, 10*time.Second)
		n, _ := strconv.Atoi(m.Metadata.Get("seq"))
		seqs = append(seqs, n)
		m.Ack()
	}
	assert.Equal(t, []int{90, 91, 92, 93, 94, 95, 96, 97, 98, 99}, seqs)
	require.Eventually(t, func() bool { return e.forgotten.Stats().TrimmedUnacked == 90 }, 10*time.Second, 20*time.Millisecond,
		"Stats().TrimmedUnacked = %d", e.forgotten.Stats().TrimmedUnacked)
	assert.NotContains(t, e.hash(keys.GroupSeen(e.stream)), "expired:forgotten", "live again")
	waitCommit(t, client, e.topic, 0, "forgotten", streamEntries(t, client, e.stream)[9].ID)

	// It leaves again: it holds back what it has not read, for the expiry, then no longer.
	require.NoError(t, e.forgotten.Close())
	cancel()
	left := time.Now()
	e.publish(100, 20)
	e.waitLen(20, "the 10 entries every group acked are trimmed")
	e.holds(20, left.Add(expiry-500*time.Millisecond))
	e.waitLen(10, "trimmed past the group expired again")
	assert.Equal(t, "100", e.hash(e.space.TrimLoss(e.topic, 0))["total:forgotten"])
	require.Eventually(t, func() bool { return e.metrics.count() == 2 }, 5*time.Second, 10*time.Millisecond)
}

// TestGroupExpiryOff: with GroupExpiry -1 a group that never consumes holds retention back
// for ever.
func TestGroupExpiryOff(t *testing.T) {
	t.Parallel()
	client := streamqtest.SingleNode.Start(t)
	e := newExpiryEnv(t, client, "expiry-off", -1)
	e.publish(0, 100)
	e.holds(100, time.Now().Add(3*time.Second)) // well past a 2s expiry
	assert.NotContains(t, e.hash(keys.GroupSeen(e.stream)), "expired:forgotten")
	assert.Empty(t, e.hash(e.space.TrimLoss(e.topic, 0)))
	assert.Zero(t, e.metrics.count())
}
