package streamq_test

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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
)

// received is what a test consumer saw: one row per delivery.
type received struct {
	member    string
	partition int
	key       string
	seq       int
	count     int64
}

// recorder collects deliveries from several subscriptions.
type recorder struct {
	mu   sync.Mutex
	rows []received
	seen map[string]bool
	got  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{seen: map[string]bool{}, got: make(chan struct{}, 1<<16)}
}

func (r *recorder) add(msg *message.Message) {
	ctx := msg.Context()
	member, _ := streamq.ConsumerFromCtx(ctx)
	part, _ := streamq.PartitionFromCtx(ctx)
	count, _ := streamq.DeliveryCountFromCtx(ctx)
	seq, _ := strconv.Atoi(msg.Metadata.Get("seq"))
	r.mu.Lock()
	r.rows = append(r.rows, received{member, part, msg.Metadata.Get(streamq.PartitionKeyMetadata), seq, count})
	first := !r.seen[msg.UUID]
	r.seen[msg.UUID] = true
	r.mu.Unlock()
	if first {
		r.got <- struct{}{}
	}
}

func (r *recorder) snapshot() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.rows...)
}

// waitUnique waits until n distinct messages were recorded.
func (r *recorder) waitUnique(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-r.got:
		case <-deadline.C:
			t.Fatalf("received %d of %d distinct messages within %s", i, n, timeout)
		}
	}
}

// consume acks every message of ch into r until ch closes.
func consumeInto(ch <-chan *message.Message, r *recorder) {
	go func() {
		for msg := range ch {
			r.add(msg)
			msg.Ack()
		}
	}()
}

func subscribeMember(t *testing.T, client redis.UniversalClient, topic, group, name string, partitions int, tweak func(*streamq.SubscriberConfig)) (*streamq.Subscriber, <-chan *message.Message) {
	t.Helper()
	cfg := fastSub(client, group)
	cfg.Membership.ConsumerName = name
	cfg.DefaultPartitionCount = partitions
	if tweak != nil {
		tweak(&cfg)
	}
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	return sub, ch
}

func publishKeyed(t *testing.T, pub *streamq.Publisher, topic string, from, to, keys int) {
	t.Helper()
	var msgs []*message.Message
	for i := from; i < to; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("m%d", i)))
		m.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("key-%d", i%keys))
		m.Metadata.Set("seq", strconv.Itoa(i))
		msgs = append(msgs, m)
	}
	require.NoError(t, pub.Publish(topic, msgs...))
}

// leaseOwners reads the member holding each partition's lease ("" when free).
func leaseOwners(t *testing.T, client redis.UniversalClient, topic, group string, n int) []string {
	t.Helper()
	space := keys.New("", "")
	out := make([]string, n)
	for p := 0; p < n; p++ {
		v, err := client.Get(context.Background(), space.Lease(topic, p, group)).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		require.NoError(t, err)
		out[p] = member.TokenMember(v)
	}
	return out
}

func countByMember(owners []string) map[string]int {
	c := map[string]int{}
	for _, o := range owners {
		c[o]++
	}
	return c
}

func balanced(want map[string]int) func(map[string]int) bool {
	return func(got map[string]int) bool {
		if got[""] > 0 {
			return false
		}
		for m, n := range want {
			if got[m] != n {
				return false
			}
		}
		return true
	}
}

func waitOwners(t *testing.T, client redis.UniversalClient, topic, group string, n int, ok func(map[string]int) bool) []string {
	t.Helper()
	var owners []string
	require.Eventually(t, func() bool {
		owners = leaseOwners(t, client, topic, group, n)
		return ok(countByMember(owners))
	}, 20*time.Second, 50*time.Millisecond, "owners never converged: %v", owners)
	return owners
}

func TestOnePartitionTwoMembersOneHandlesAll(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "one-partition"
	_, chA := subscribeMember(t, client, topic, "g", "a", 1, nil)
	_, chB := subscribeMember(t, client, topic, "g", "b", 1, nil)
	rec := newRecorder()
	consumeInto(chA, rec)
	consumeInto(chB, rec)
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	publishKeyed(t, pub, topic, 0, 200, 10)
	rec.waitUnique(t, 200, 20*time.Second)

	members := map[string]int{}
	for _, r := range rec.snapshot() {
		members[r.member]++
	}
	assert.Len(t, members, 1, "one member must handle every message of the only partition: %v", members)
}

func TestMaxLeasedPartitionsCapsEachMember(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "capped"
	capOne := func(c *streamq.SubscriberConfig) { c.Membership.MaxLeasedPartitions = 1 }
	_, chA := subscribeMember(t, client, topic, "g", "a", 4, capOne)
	_, chB := subscribeMember(t, client, topic, "g", "b", 4, capOne)
	rec := newRecorder()
	consumeInto(chA, rec)
	consumeInto(chB, rec)

	owners := waitOwners(t, client, topic, "g", 4, func(c map[string]int) bool { return c["a"] == 1 && c["b"] == 1 })
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client})
	for p := 0; p < 4; p++ {
		for i := 0; i < 10; i++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("x"))
			m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
			require.NoError(t, pub.Publish(topic, m))
		}
		for _, c := range countByMember(leaseOwners(t, client, topic, "g", 4)) {
			assert.LessOrEqual(t, c, 2) // "" counts the two free partitions
		}
	}
	rec.waitUnique(t, 20, 10*time.Second)
	for _, o := range leaseOwners(t, client, topic, "g", 4) {
		assert.Contains(t, owners, o)
	}
	parts := map[string]map[int]bool{}
	for _, r := range rec.snapshot() {
		if parts[r.member] == nil {
			parts[r.member] = map[int]bool{}
		}
		parts[r.member][r.partition] = true
	}
	for m, ps := range parts {
		assert.Len(t, ps, 1, "member %s consumed partitions %v", m, ps)
	}
}

func TestTwelvePartitionsBalanceAndStickyJoin(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "twelve"
	for _, name := range []string{"a", "b", "c"} {
		_, ch := subscribeMember(t, client, topic, "g", name, 12, nil)
		consumeInto(ch, newRecorder())
	}
	before := waitOwners(t, client, topic, "g", 12, balanced(map[string]int{"a": 4, "b": 4, "c": 4}))

	_, ch := subscribeMember(t, client, topic, "g", "d", 12, nil)
	consumeInto(ch, newRecorder())
	after := waitOwners(t, client, topic, "g", 12, balanced(map[string]int{"a": 3, "b": 3, "c": 3, "d": 3}))

	moved := 0
	for p := range before {
		if before[p] != after[p] {
			moved++
		}
	}
	t.Logf("before %v, after %v: %d partitions moved", before, after, moved)
	assert.LessOrEqual(t, moved, 4)
}

func TestCrashedMemberPartitionsAndPendingTakenOver(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "crash"
	ttl := func(c *streamq.SubscriberConfig) { c.Membership.LeaseTTL = 1500 * time.Millisecond }
	subA, chA := subscribeMember(t, client, topic, "g", "a", 1, ttl)
	waitOwners(t, client, topic, "g", 1, balanced(map[string]int{"a": 1}))
	_, chB := subscribeMember(t, client, topic, "g", "b", 1, ttl)

	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client})
	publishKeyed(t, pub, topic, 0, 5, 1)

	first := <-chA // delivered to a, never acked
	require.Equal(t, "0", first.Metadata.Get("seq"))
	crashedAt := time.Now()
	streamq.Crash(subA)

	rec := newRecorder()
	consumeInto(chB, rec)
	rec.waitUnique(t, 5, 15*time.Second)
	tookOver := time.Since(crashedAt)

	rows := rec.snapshot()
	require.Equal(t, 0, rows[0].seq, "the crashed member's pending message comes first")
	assert.Equal(t, "b", rows[0].member)
	assert.GreaterOrEqual(t, rows[0].count, int64(2), "redelivery carries the delivery count")
	for i, r := range rows {
		assert.Equal(t, i, r.seq, "order kept after takeover")
	}
	t.Logf("taken over %s after the crash (lease TTL 1.5s)", tookOver)
	assert.Equal(t, []string{"b"}, leaseOwners(t, client, topic, "g", 1))
}

func TestPartitionFilter(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "filtered"
	even := func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 0 }
	odd := func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 1 }
	_, chE := subscribeMember(t, client, topic, "g", "even", 6, even)
	_, chO := subscribeMember(t, client, topic, "g", "odd", 6, odd)
	rec := newRecorder()
	consumeInto(chE, rec)
	consumeInto(chO, rec)
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client})
	publishKeyed(t, pub, topic, 0, 300, 30)
	rec.waitUnique(t, 300, 20*time.Second)

	for _, r := range rec.snapshot() {
		want := "even"
		if r.partition%2 == 1 {
			want = "odd"
		}
		assert.Equal(t, want, r.member, "partition %d", r.partition)
	}
	owners := leaseOwners(t, client, topic, "g", 6)
	for p, o := range owners {
		assert.Equal(t, map[bool]string{true: "even", false: "odd"}[p%2 == 0], o)
	}
}

func TestPerKeyOrderAcrossGracefulHandover(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	topic := "handover"
	const total, keyCount = 3000, 24
	rec := newRecorder()
	slow := func(ch <-chan *message.Message) {
		go func() {
			for msg := range ch {
				rec.add(msg)
				// Simulated work, so handovers happen mid-stream.
				time.Sleep(100 * time.Microsecond)
				msg.Ack()
			}
		}()
	}
	subA, chA := subscribeMember(t, client, topic, "g", "a", 6, nil)
	slow(chA)
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client})
	publishKeyed(t, pub, topic, 0, total/2, keyCount)

	rec.waitUnique(t, 300, 20*time.Second)
	_, chB := subscribeMember(t, client, topic, "g", "b", 6, nil)
	slow(chB)
	publishKeyed(t, pub, topic, total/2, total, keyCount)
	rec.waitUnique(t, 1200, 20*time.Second)
	require.NoError(t, subA.Close()) // graceful: everything left moves to b
	rec.waitUnique(t, total-1500, 30*time.Second)

	last := map[string]int{}
	members := map[string]bool{}
	for _, r := range rec.snapshot() {
		members[r.member] = true
		prev, ok := last[r.key]
		if ok {
			require.Greater(t, r.seq, prev, "key %s: %d delivered after %d", r.key, r.seq, prev)
		}
		last[r.key] = r.seq
	}
	assert.Len(t, members, 2, "both members handled messages")
}
