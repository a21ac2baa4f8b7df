package admin_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// The retention end-to-end test: one partition, 100 messages published without length
// retention, group "slow" acks 50 and leaves, group "fast" acks everything and keeps running
// (its lease holder trims every heldTrimInterval), then a Publisher records MaxLen 10.
const (
	heldE2ETopic     = "retained"
	heldPublished    = 100
	heldSlowAcks     = 50
	heldMaxLen       = 10
	heldTrimInterval = 200 * time.Millisecond
)

// TestRetentionHeldBySlowGroup is the acceptance point, on a single redis-server and
// on a 3-master cluster: trimming stops at the stopped group's position, QueueInfo and
// GroupStats name that group and the count it holds back, and once the group is deleted the
// partition shrinks to MaxLen at the running group's next trim.
func TestRetentionHeldBySlowGroup(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(t *testing.T) redis.UniversalClient{
		"single":  func(t *testing.T) redis.UniversalClient { return redistest.Start(t).Client(t) },
		"cluster": func(t *testing.T) redis.UniversalClient { return redistest.StartCluster(t, 3, 0).Client(t) },
	} {
		t.Run(name, func(t *testing.T) { heldBySlowGroup(t, start(t)) })
	}
}

func heldBySlowGroup(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	unbounded := heldPublisher(t, client, streamq.PublisherConfig{Trim: streamq.TrimConfig{MaxLen: -1}})
	for i := range heldPublished {
		require.NoError(t, unbounded.Publish(heldE2ETopic, heldMessage(i)))
	}
	ackAndLeave(t, client, "slow", heldSlowAcks)
	acked := ackAll(t, client, "fast")
	bounded := heldPublisher(t, client, streamq.PublisherConfig{Trim: streamq.TrimConfig{MaxLen: heldMaxLen, Exact: true}})
	require.NoError(t, bounded.Publish(heldE2ETopic, heldMessage(heldPublished)))
	require.Eventually(t, func() bool { return acked() == heldPublished+1 }, 30*time.Second, 10*time.Millisecond,
		"group fast never acked every message")

	const kept = heldPublished + 1 - heldSlowAcks // from slow's position on
	requireLength(t, adm, kept)
	<-time.After(3 * heldTrimInterval) // a few more trims: the length stays
	requireLength(t, adm, kept)
	first, err := adm.Range(ctx, heldE2ETopic, 0, "", "", 1)
	require.NoError(t, err)
	require.Len(t, first, 1)
	assert.Equal(t, "m"+strconv.Itoa(heldSlowAcks), string(first[0].Payload), "the first entry slow has not acked")

	const over = kept - heldMaxLen
	q, err := adm.QueueInfo(ctx, heldE2ETopic)
	require.NoError(t, err)
	assert.Equal(t, admin.LengthRetention{MaxLen: heldMaxLen, Exact: true, Policy: admin.TrimAcked, Recorded: true}, q.Retention)
	p := q.PerPartition[0]
	assert.Equal(t, int64(over), p.OverMaxLen)
	assert.Equal(t, "slow", p.Holder)
	assert.Equal(t, first[0].ID, p.HolderNeeds)
	assert.Equal(t, int64(over), p.HeldBack)
	assert.Equal(t, map[string]int64{"slow": over, "fast": 0}, holdsBack(t, adm, "slow", "fast"))

	_, err = adm.DeleteGroup(ctx, heldE2ETopic, "slow")
	require.NoError(t, err)
	requireLength(t, adm, heldMaxLen)
	q, err = adm.QueueInfo(ctx, heldE2ETopic)
	require.NoError(t, err)
	assert.Zero(t, q.OverMaxLen)
	assert.Empty(t, q.PerPartition[0].Holder)
	assert.Equal(t, map[string]int64{"fast": 0}, holdsBack(t, adm, "fast"))
}

// heldPublisher is a Publisher of the one-partition topic, closed at cleanup.
func heldPublisher(t *testing.T, client redis.UniversalClient, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	cfg.Client, cfg.DefaultPartitionCount = client, 1
	pub, err := streamq.NewPublisher(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

// heldMessage i has payload "m<i>".
func heldMessage(i int) *message.Message {
	return message.NewMessage(watermill.NewUUID(), []byte("m"+strconv.Itoa(i)))
}

// heldSubscriber subscribes group to the topic with a fast trim and metadata refresh.
func heldSubscriber(t *testing.T, client redis.UniversalClient, group string) (*streamq.Subscriber, <-chan *message.Message) {
	t.Helper()
	cfg := fastSub(client, group, 1)
	cfg.Retention.TrimInterval, cfg.Membership.PartitionRefreshInterval, cfg.Delivery.CloseTimeout = heldTrimInterval, 100*time.Millisecond, 500*time.Millisecond
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(context.Background(), heldE2ETopic)
	require.NoError(t, err)
	return sub, ch
}

// ackAndLeave acks the first n messages as group, in order, then closes its Subscriber: the
// message after them stays unacked.
func ackAndLeave(t *testing.T, client redis.UniversalClient, group string, n int) {
	t.Helper()
	sub, ch := heldSubscriber(t, client, group)
	for i := range n {
		select {
		case m := <-ch:
			require.Equal(t, "m"+strconv.Itoa(i), string(m.Payload), "in order")
			m.Ack()
		case <-time.After(30 * time.Second):
			t.Fatalf("group %q got %d of %d messages", group, i, n)
		}
	}
	require.NoError(t, sub.Close())
}

// ackAll acks every message as group until cleanup, and returns how many it acked so far.
func ackAll(t *testing.T, client redis.UniversalClient, group string) func() int {
	t.Helper()
	sub, ch := heldSubscriber(t, client, group)
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			m.Ack()
			mu.Lock()
			acked++
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = sub.Close()
		wg.Wait()
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
}

// requireLength waits (bounded) until the topic's one partition holds n entries.
func requireLength(t *testing.T, adm *admin.Admin, n int64) {
	t.Helper()
	var last atomic.Int64
	if !assert.Eventually(t, func() bool {
		q, err := adm.QueueInfo(context.Background(), heldE2ETopic)
		last.Store(q.Length)
		return err == nil && q.Length == n
	}, 10*time.Second, 20*time.Millisecond) {
		t.Fatalf("partition length: want %d, last read %d", n, last.Load())
	}
}

// holdsBack is GroupStats' HoldsBack of each group.
func holdsBack(t *testing.T, adm *admin.Admin, groups ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, g := range groups {
		st, err := adm.GroupStats(context.Background(), heldE2ETopic, g)
		require.NoError(t, err)
		require.Len(t, st.Partitions, 1)
		assert.Equal(t, st.HoldsBack, st.Partitions[0].HoldsBack, "group %q: the one partition is the total", g)
		out[g] = st.Partitions[0].HoldsBack
	}
	return out
}
