package streamq_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestOnePartitionTwoMembersOneHandlesAll(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topic := "one-partition"
	_, chA := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, nil)
	_, chB := streamqtest.SubscribeMember(t, client, topic, "g", "b", 1, nil)
	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(chA, rec)
	streamqtest.ConsumeInto(chB, rec)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	streamqtest.PublishKeyed(t, pub, topic, 0, 200, 10)
	rec.WaitUnique(t, 200, 20*time.Second)

	members := map[string]int{}
	for _, r := range rec.Snapshot() {
		members[r.Member]++
	}
	assert.Len(t, members, 1, "one member must handle every message of the only partition: %v", members)
}

func TestMaxLeasedPartitionsCapsEachMember(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topic := "capped"
	capOne := func(c *streamq.SubscriberConfig) { c.Membership.MaxLeasedPartitions = 1 }
	_, chA := streamqtest.SubscribeMember(t, client, topic, "g", "a", 4, capOne)
	_, chB := streamqtest.SubscribeMember(t, client, topic, "g", "b", 4, capOne)
	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(chA, rec)
	streamqtest.ConsumeInto(chB, rec)

	owners := streamqtest.WaitOwners(t, client, topic, "g", 4, func(c map[string]int) bool { return c["a"] == 1 && c["b"] == 1 })
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	for p := 0; p < 4; p++ {
		for i := 0; i < 10; i++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("x"))
			m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
			require.NoError(t, pub.Publish(topic, m))
		}
		for _, c := range streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, "g", 4)) {
			assert.LessOrEqual(t, c, 2) // "" counts the two free partitions
		}
	}
	rec.WaitUnique(t, 20, 10*time.Second)
	for _, o := range streamqtest.LeaseOwners(t, client, topic, "g", 4) {
		assert.Contains(t, owners, o)
	}
	parts := map[string]map[int]bool{}
	for _, r := range rec.Snapshot() {
		if parts[r.Member] == nil {
			parts[r.Member] = map[int]bool{}
		}
		parts[r.Member][r.Partition] = true
	}
	for m, ps := range parts {
		assert.Len(t, ps, 1, "member %s consumed partitions %v", m, ps)
	}
}

func TestTwelvePartitionsBalanceAndStickyJoin(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topic := "twelve"
	for _, name := range []string{"a", "b", "c"} {
		_, ch := streamqtest.SubscribeMember(t, client, topic, "g", name, 12, nil)
		streamqtest.ConsumeInto(ch, streamqtest.NewRecorder())
	}
	before := streamqtest.WaitOwners(t, client, topic, "g", 12, streamqtest.Balanced(map[string]int{"a": 4, "b": 4, "c": 4}))

	_, ch := streamqtest.SubscribeMember(t, client, topic, "g", "d", 12, nil)
	streamqtest.ConsumeInto(ch, streamqtest.NewRecorder())
	after := streamqtest.WaitOwners(t, client, topic, "g", 12, streamqtest.Balanced(map[string]int{"a": 3, "b": 3, "c": 3, "d": 3}))

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
	_, client := streamqtest.StartRedis(t)
	topic := "crash"
	ttl := func(c *streamq.SubscriberConfig) { c.Membership.LeaseTTL = 1500 * time.Millisecond }
	subA, chA := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, ttl)
	streamqtest.WaitOwners(t, client, topic, "g", 1, streamqtest.Balanced(map[string]int{"a": 1}))
	_, chB := streamqtest.SubscribeMember(t, client, topic, "g", "b", 1, ttl)

	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 5, 1)

	first := <-chA // delivered to a, never acked
	require.Equal(t, "0", first.Metadata.Get("seq"))
	crashedAt := time.Now()
	streamq.Crash(subA)

	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(chB, rec)
	rec.WaitUnique(t, 5, 15*time.Second)
	tookOver := time.Since(crashedAt)

	rows := rec.Snapshot()
	require.Equal(t, 0, rows[0].Seq, "the crashed member's pending message comes first")
	assert.Equal(t, "b", rows[0].Member)
	assert.GreaterOrEqual(t, rows[0].Count, int64(2), "redelivery carries the delivery count")
	for i, r := range rows {
		assert.Equal(t, i, r.Seq, "order kept after takeover")
	}
	t.Logf("taken over %s after the crash (lease TTL 1.5s)", tookOver)
	assert.Equal(t, []string{"b"}, streamqtest.LeaseOwners(t, client, topic, "g", 1))
}

func TestPartitionFilter(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topic := "filtered"
	even := func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 0 }
	odd := func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 1 }
	_, chE := streamqtest.SubscribeMember(t, client, topic, "g", "even", 6, even)
	_, chO := streamqtest.SubscribeMember(t, client, topic, "g", "odd", 6, odd)
	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(chE, rec)
	streamqtest.ConsumeInto(chO, rec)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 300, 30)
	rec.WaitUnique(t, 300, 20*time.Second)

	for _, r := range rec.Snapshot() {
		want := "even"
		if r.Partition%2 == 1 {
			want = "odd"
		}
		assert.Equal(t, want, r.Member, "partition %d", r.Partition)
	}
	owners := streamqtest.LeaseOwners(t, client, topic, "g", 6)
	for p, o := range owners {
		assert.Equal(t, map[bool]string{true: "even", false: "odd"}[p%2 == 0], o)
	}
}

func TestPerKeyOrderAcrossGracefulHandover(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topic := "handover"
	const total, keyCount = 3000, 24
	rec := streamqtest.NewRecorder()
	slow := func(ch <-chan *message.Message) {
		go func() {
			for msg := range ch {
				rec.Add(msg)
				// Simulated work, so handovers happen mid-stream.
				time.Sleep(100 * time.Microsecond)
				msg.Ack()
			}
		}()
	}
	subA, chA := streamqtest.SubscribeMember(t, client, topic, "g", "a", 6, nil)
	slow(chA)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, total/2, keyCount)

	rec.WaitUnique(t, 300, 20*time.Second)
	_, chB := streamqtest.SubscribeMember(t, client, topic, "g", "b", 6, nil)
	slow(chB)
	streamqtest.PublishKeyed(t, pub, topic, total/2, total, keyCount)
	rec.WaitUnique(t, 1200, 20*time.Second)
	require.NoError(t, subA.Close()) // graceful: everything left moves to b
	rec.WaitUnique(t, total-1500, 30*time.Second)

	last := map[string]int{}
	members := map[string]bool{}
	for _, r := range rec.Snapshot() {
		members[r.Member] = true
		prev, ok := last[r.Key]
		if ok {
			require.Greater(t, r.Seq, prev, "key %s: %d delivered after %d", r.Key, r.Seq, prev)
		}
		last[r.Key] = r.Seq
	}
	assert.Len(t, members, 2, "both members handled messages")
}
