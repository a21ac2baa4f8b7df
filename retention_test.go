package streamq_test

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// seqMessages returns n messages with metadata seq from..from+n-1.
func seqMessages(from, n int, payload func() []byte) []*message.Message {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		p := []byte("x")
		if payload != nil {
			p = payload()
		}
		msgs[i] = message.NewMessage(watermill.NewUUID(), p)
		msgs[i].Metadata.Set("seq", strconv.Itoa(from+i))
	}
	return msgs
}

// seqsOf returns the seq metadata of stream or DLQ entries, in stream order.
func seqsOf(t testing.TB, entries []redis.XMessage) []int {
	t.Helper()
	out := make([]int, len(entries))
	for i, e := range entries {
		n, err := strconv.Atoi(entryMetadata(t, e)["seq"])
		require.NoError(t, err)
		out[i] = n
	}
	return out
}

// ackAll acks every message of ch until it closes.
func ackAll(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			m.Ack()
		}
	}()
}

// TestLengthRetentionWithoutGroups: with no consumer group registered, a partition is capped
// at about MaxLen, as the seed caps it, by the Publisher's background trims (every MaxLen/100
// appends, at most 1000), exactly or in whole macro nodes, offloaded entries included.
func TestLengthRetentionWithoutGroups(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testLengthRetentionWithoutGroups)
}

func testLengthRetentionWithoutGroups(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	space := keys.New("", "")
	cases := []struct {
		name    string
		exact   bool
		sends   int
		payload func() []byte
	}{
		{name: "exact", exact: true, sends: 20},
		{name: "exact offloaded", exact: true, sends: 20, payload: func() []byte { return randomPayload(t, bigPayloadSize) }},
		{name: "approximate", sends: 1000},
	}
	for _, tc := range cases {
		topic := "maxlen-" + strings.ReplaceAll(tc.name, " ", "-")
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: 5, Exact: tc.exact}})
		for from := 0; from < tc.sends; from += 10 {
			require.NoError(t, pub.Publish(topic, seqMessages(from, 10, tc.payload)...), tc.name)
		}
		str := space.PartitionStream(topic, 0)
		if tc.exact {
			require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 5 }, 10*time.Second, 10*time.Millisecond, tc.name)
			assert.Equal(t, []int{15, 16, 17, 18, 19}, seqsOf(t, streamEntries(t, client, str)), "%s: keeps exactly the newest 5", tc.name)
			continue
		}
		// Approximate trimming removes whole radix-tree nodes only, so a partition keeps
		// between N and N + stream-node-max-entries (100 by default) entries.
		require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) <= 5+100 }, 10*time.Second, 10*time.Millisecond, tc.name)
		seqs := seqsOf(t, streamEntries(t, client, str))
		assert.GreaterOrEqual(t, len(seqs), 5, tc.name)
		assert.Equal(t, tc.sends-1, seqs[len(seqs)-1], "%s: the newest entry is kept", tc.name)
	}

	// The default MaxLen: 150,000 messages to a topic no group ever joined leave about MaxLen.
	redistest.SkipShort(t, "the default MaxLen, past 150,000 messages,")
	const published = 150_000
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	for from := 0; from < published; from += 1000 {
		require.NoError(t, pub.Publish("no-group", seqMessages(from, 1000, nil)...))
	}
	str := space.PartitionStream("no-group", 0)
	bound := streamq.DefaultMaxLen + 1000 + 100 // a trim per 1000 appends (MaxLen/100, at most 1000), whole nodes
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) <= bound }, 10*time.Second, 20*time.Millisecond,
		"length %d, want at most %d", streamqtest.XLen(t, client, str), bound)
	assert.GreaterOrEqual(t, streamqtest.XLen(t, client, str), streamq.DefaultMaxLen)
}

// TestLengthRetentionKeepsWhatAGroupIsOwed: a group registered on a one-partition topic, no
// consumer running, and more than MaxLen messages published with the default config: nothing
// is trimmed; a consumer started afterwards receives every message, and once they are acked
// the partition is back to about MaxLen within TrimInterval.
func TestLengthRetentionKeepsWhatAGroupIsOwed(t *testing.T) {
	t.Parallel()
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		redistest.SkipShort(t, "the default MaxLen, past 150,000 messages,")
		testLengthRetentionKeepsWhatAGroupIsOwed(t, streamqtest.SingleNode.Start(t), 0, 150_000)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		testLengthRetentionKeepsWhatAGroupIsOwed(t, streamqtest.ThreeMasters.Start(t), 2000, 5000)
	})
}

func testLengthRetentionKeepsWhatAGroupIsOwed(t *testing.T, client redis.UniversalClient, maxLen int64, published int) {
	ctx := context.Background()
	const topic = "owed"
	str := keys.New("", "").PartitionStream(topic, 0)
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retention.TrimInterval = 500 * time.Millisecond
	cfg.Read.BatchCount = 500
	cfg.Acks.BatchSize = 500
	waiting := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, waiting.SubscribeInitialize(topic)) // the group, declared; no topic yet
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: maxLen}})
	for from := 0; from < published; from += 1000 {
		require.NoError(t, pub.Publish(topic, seqMessages(from, 1000, nil)...))
	}
	require.Equal(t, int64(published), streamqtest.XLen(t, client, str), "retention removed entries the group has not read")

	ch, err := waiting.Subscribe(ctx, topic)
	require.NoError(t, err)
	seen := make([]bool, published)
	for got := 0; got < published; {
		m := nextMsg(t, ch, 30*time.Second)
		seq, err := strconv.Atoi(m.Metadata.Get("seq"))
		require.NoError(t, err)
		if !seen[seq] {
			seen[seq] = true
			got++
		}
		m.Ack()
	}
	limit := cmp.Or(maxLen, streamq.DefaultMaxLen)
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) <= limit+100 }, 10*time.Second, 50*time.Millisecond,
		"the partition shrinks back once the group acked: length %d", streamqtest.XLen(t, client, str))
	assert.GreaterOrEqual(t, streamqtest.XLen(t, client, str), limit)
}

// TestLengthRetentionStopsAtTheSlowestGroup: two groups, one stopped halfway: trimming stops at
// the stopped group's position; after the group is deleted the partition shrinks.
func TestLengthRetentionStopsAtTheSlowestGroup(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testLengthRetentionStopsAtTheSlowestGroup)
}

func testLengthRetentionStopsAtTheSlowestGroup(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic = "slowest"
	str := keys.New("", "").PartitionStream(topic, 0)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Trim: streamq.TrimConfig{MaxLen: -1}})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 100, nil)...))
	fast, slow := streamqtest.FastSub(client, "fast"), streamqtest.FastSub(client, "slow")
	fast.Retention.TrimInterval, slow.Retention.TrimInterval = 200*time.Millisecond, 200*time.Millisecond
	fast.Membership.PartitionRefreshInterval = 100 * time.Millisecond       // picks up the retention recorded below
	consumeAndClose(t, streamqtest.NewSubscriber(t, slow), topic, 50, true) // then it stops
	fastSub := streamqtest.NewSubscriber(t, fast)
	ch, err := fastSub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)
	waitCommit(t, client, topic, 0, "fast", streamEntries(t, client, str)[99].ID)

	// From now on the topic keeps 10 entries.
	capped := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: 10, Exact: true}})
	require.NoError(t, capped.Publish(topic, seqMessages(100, 1, nil)...))
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 51 }, 10*time.Second, 20*time.Millisecond,
		"trimmed to the slow group's position (51 entries), length %d", streamqtest.XLen(t, client, str))
	require.Never(t, func() bool { return streamqtest.XLen(t, client, str) < 51 }, time.Second, 50*time.Millisecond,
		"trimmed entries the slow group has not read")
	assert.Equal(t, 50, seqsOf(t, streamEntries(t, client, str))[0])

	require.NoError(t, client.XGroupDestroy(ctx, str, "slow").Err())
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 10 }, 10*time.Second, 20*time.Millisecond,
		"the partition shrinks once the slow group is gone, length %d", streamqtest.XLen(t, client, str))
}

// consumeAndClose receives n messages of topic on a subscription of its own, acking them (or not),
// then closes the subscription.
func consumeAndClose(t *testing.T, sub *streamq.Subscriber, topic string, n int, ack bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		m := nextMsg(t, ch, 10*time.Second)
		if ack {
			m.Ack()
		}
	}
	require.NoError(t, sub.Close())
	cancel()
	for range ch {
	}
}

// TestHardLengthCapCountsWhatItRemovesUnread: the opt-in hard cap removes unread entries, and
// the count it records (per group, in Stats and the trim-loss hash) equals the entries it
// removed before the group acked them.
func TestHardLengthCapCountsWhatItRemovesUnread(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testHardLengthCapCountsWhatItRemovesUnread)
}

func testHardLengthCapCountsWhatItRemovesUnread(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic = "hard"
	space := keys.New("", "")
	str := space.PartitionStream(topic, 0)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Trim: streamq.TrimConfig{MaxLen: -1}})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 100, nil)...))
	consumeAndClose(t, streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "all")), topic, 100, true)
	consumeAndClose(t, streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "some")), topic, 30, true)
	waitCommit(t, client, topic, 0, "some", streamEntries(t, client, str)[29].ID)

	capped := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: 10, Exact: true, Policy: streamq.TrimHard}})
	require.NoError(t, capped.Publish(topic, seqMessages(100, 1, nil)...))
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 10 }, 10*time.Second, 20*time.Millisecond,
		"the hard cap keeps 10 entries, length %d", streamqtest.XLen(t, client, str))
	// Removed: seqs 0..90. Group "some" had acked 0..29: it lost 30..90 (61); "all" lost none.
	loss, err := client.HGetAll(ctx, space.TrimLoss(topic, 0)).Result()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"total:some": "61", "new:some": "61"}, loss)

	cfg := streamqtest.FastSub(client, "some")
	cfg.Retention.TrimInterval = 100 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var seqs []int
	for i := 0; i < 10; i++ {
		m := nextMsg(t, ch, 10*time.Second)
		n, _ := strconv.Atoi(m.Metadata.Get("seq"))
		seqs = append(seqs, n)
		m.Ack()
	}
	assert.Equal(t, []int{91, 92, 93, 94, 95, 96, 97, 98, 99, 100}, seqs)
	require.Eventually(t, func() bool { return sub.Stats().TrimmedUnacked == 61 }, 10*time.Second, 20*time.Millisecond,
		"Stats().TrimmedUnacked = %d", sub.Stats().TrimmedUnacked)
	total, err := client.HGet(ctx, space.TrimLoss(topic, 0), "total:some").Result()
	require.NoError(t, err)
	assert.Equal(t, "61", total, "the cumulative count stays for operators")
}

func TestRetentionTrimsByAge(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testRetentionTrimsByAge)
}

func testRetentionTrimsByAge(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "aged"
	str := space.PartitionStream(topic, 0)
	// g2 never consumes: under TrimHard its unread entries are trimmed all the same.
	lazy := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g2"))
	require.NoError(t, lazy.SubscribeInitialize(topic))
	cfg := streamqtest.FastSub(client, "g1")
	const maxAge = 3 * time.Second // the fresh entry below is checked well before it is this old
	cfg.Retention.MaxAge = maxAge
	cfg.Retention.Policy = streamq.TrimHard
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})

	publishedAt := time.Now()
	require.NoError(t, pub.Publish(topic, seqMessages(0, 5, nil)...))
	require.Equal(t, int64(5), streamqtest.XLen(t, client, str))
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 0 }, 10*time.Second, 20*time.Millisecond,
		"entries older than Retention are trimmed")
	assert.GreaterOrEqual(t, time.Since(publishedAt), maxAge, "trimmed before they were older than Retention")

	require.NoError(t, pub.Publish(topic, seqMessages(5, 1, nil)...))
	// A few trim rounds (TrimInterval 200ms) while the fresh entry is younger than maxAge.
	require.Never(t, func() bool { return streamqtest.XLen(t, client, str) == 0 }, 500*time.Millisecond, 20*time.Millisecond,
		"a fresh entry was trimmed")
	assert.Equal(t, []int{5}, seqsOf(t, streamEntries(t, client, str)))
	loss, err := client.HGet(ctx, space.TrimLoss(topic, 0), "total:g2").Result()
	require.NoError(t, err)
	assert.Equal(t, "5", loss, "g2 lost the 5 entries it never read")
}

func TestSafeRetentionWaitsForEveryGroup(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testSafeRetentionWaitsForEveryGroup)
}

func testSafeRetentionWaitsForEveryGroup(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "safe"
	str := space.PartitionStream(topic, 0)
	lazy := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g2"))
	require.NoError(t, lazy.SubscribeInitialize(topic)) // g2 exists and has not read anything
	cfg := streamqtest.FastSub(client, "g1")
	cfg.Retention.MaxAge = time.Second // the default TrimPolicy: never past what a group needs
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})

	require.NoError(t, pub.Publish(topic, seqMessages(0, 3, nil)...))
	last := streamEntries(t, client, str)[2].ID
	waitCommit(t, client, topic, 0, "g1", last)
	// Well past Retention (and several trim rounds): g2 still needs them.
	require.Never(t, func() bool { return streamqtest.XLen(t, client, str) < 3 }, 1800*time.Millisecond, 50*time.Millisecond,
		"time retention trimmed entries group g2 has not read")

	ch2, err := lazy.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		nextMsg(t, ch2, 10*time.Second).Ack()
	}
	waitCommit(t, client, topic, 0, "g2", last)
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 0 }, 10*time.Second, 20*time.Millisecond,
		"entries every group acked are trimmed on a later round")
}

// deadLetterAll dead-letters every message of ch until it closes.
func deadLetterAll(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			_ = streamq.DeadLetter(m, errors.New("unwanted"))
			m.Nack()
		}
	}()
}

func TestDLQRetentionByLength(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQRetentionByLength)
}

func testDLQRetentionByLength(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "dlq-len"
	dlqKey := space.DLQ(topic, 0)
	cfg := streamqtest.FastSub(client, "g1")
	cfg.Retention.DLQMaxLen = 3
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	deadLetterAll(ch)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 6, nil)...))

	require.Eventually(t, func() bool {
		return sub.Stats().DeadLettered == 6 && streamqtest.XLen(t, client, dlqKey) == 3
	}, 10*time.Second, 20*time.Millisecond, "6 dead letters trimmed to 3")
	assert.Equal(t, []int{3, 4, 5}, seqsOf(t, streamEntries(t, client, dlqKey)), "the newest dead letters are kept")
}

func TestDLQRetentionByAge(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQRetentionByAge)
}

func testDLQRetentionByAge(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "dlq-age"
	dlqKey := space.DLQ(topic, 0)
	cfg := streamqtest.FastSub(client, "g1")
	cfg.Retention.DLQMaxAge = time.Second
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	deadLetterAll(ch)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})

	require.NoError(t, pub.Publish(topic, seqMessages(0, 3, nil)...))
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, dlqKey) == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, dlqKey) == 0 }, 10*time.Second, 20*time.Millisecond,
		"dead letters older than DLQMaxAge are removed")

	require.NoError(t, pub.Publish(topic, seqMessages(3, 1, nil)...))
	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, dlqKey) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Never(t, func() bool { return streamqtest.XLen(t, client, dlqKey) == 0 }, 400*time.Millisecond, 20*time.Millisecond,
		"a fresh dead letter was removed")
	assert.Equal(t, []int{3}, seqsOf(t, streamEntries(t, client, dlqKey)))
	assert.Equal(t, int64(4), sub.Stats().DeadLettered)
}

func TestOrphanedPayloadsSwept(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testOrphanedPayloadsSwept)
}

func testOrphanedPayloadsSwept(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "orphans"
	str, index := space.PartitionStream(topic, 0), space.PayloadIndex(topic, 0)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	require.NoError(t, pub.Publish(topic, bigMessage(t), bigMessage(t), bigMessage(t)))
	entries := streamEntries(t, client, str)
	require.Len(t, entries, 3)
	type offloaded struct{ id, key, member string }
	var items []offloaded
	for _, e := range entries {
		ref := offloadedRef(t, e, bigPayloadSize)
		items = append(items, offloaded{e.ID, space.Payload(topic, 0, ref), e.ID + "|" + ref})
	}
	orphan, young, alive := items[0], items[1], items[2]
	// orphan: entry deleted, indexed two minutes ago (the sweep skips members younger than
	// a minute). young: entry deleted, indexed just now. alive: entry kept, indexed long ago.
	require.NoError(t, client.XDel(ctx, str, orphan.id, young.id).Err())
	old := float64(time.Now().Add(-2 * time.Minute).UnixMilli())
	for _, it := range []offloaded{orphan, alive} {
		n, err := client.ZAddXX(ctx, index, redis.Z{Score: old, Member: it.member}).Result()
		require.NoError(t, err)
		require.Equal(t, int64(0), n, "ZADD XX only rewrites the score")
		score, err := client.ZScore(ctx, index, it.member).Result()
		require.NoError(t, err)
		require.Equal(t, old, score)
	}

	cfg := streamqtest.FastSub(client, "g1")
	cfg.Membership.GroupStartID = "$" // the group never reads (and acks) the kept entry
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)

	require.Eventually(t, func() bool {
		return !keyExists(t, client, orphan.key) && !indexed(t, client, index, orphan.member)
	}, 10*time.Second, 20*time.Millisecond, "the orphaned payload and its index member are removed")
	assert.True(t, keyExists(t, client, young.key), "an orphan younger than the grace period is kept")
	assert.True(t, indexed(t, client, index, young.member))
	assert.True(t, keyExists(t, client, alive.key), "a payload whose entry exists is kept")
	assert.True(t, indexed(t, client, index, alive.member))
}

// TestLengthRetentionAppliesToEveryAppend: the length retention a Publisher records for a topic
// (MaxLen 5, exact) applies, under the same rule, to what the lease holders append: delayed
// messages moved back, retries appended at once and parked ones, replays from the DLQ, and
// items handed back to another partition. Once the group acked everything, 5 entries are left.
func TestLengthRetentionAppliesToEveryAppend(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testLengthRetentionAppliesToEveryAppend)
}

func testLengthRetentionAppliesToEveryAppend(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	firstDelivery := func(m *message.Message) bool { return m.Metadata.Get(streamq.RetryCountMetadata) == "" }
	type row struct {
		name    string
		backoff time.Duration
		p       int // the partition that grows
		produce func(t *testing.T, pub *streamq.Publisher, topic string)
		handle  func(m *message.Message) bool // false: nack
	}
	forced := func(from, n int, d time.Duration) []*message.Message {
		msgs := seqMessages(from, n, nil)
		for _, m := range msgs {
			m.Metadata.Set(streamq.ForcePartitionMetadata, "0")
			if d > 0 {
				delay.Message(m, delay.For(d))
			}
		}
		return msgs
	}
	publish := func(d time.Duration) func(*testing.T, *streamq.Publisher, string) {
		return func(t *testing.T, pub *streamq.Publisher, topic string) {
			require.NoError(t, pub.Publish(topic, forced(0, 20, d)...))
		}
	}
	rows := []row{
		{name: "delayed", produce: publish(150 * time.Millisecond), handle: func(*message.Message) bool { return true }},
		{name: "retried at once", produce: publish(0), handle: func(m *message.Message) bool { return !firstDelivery(m) }},
		{name: "retried later", backoff: 150 * time.Millisecond, produce: publish(0),
			handle: func(m *message.Message) bool { return !firstDelivery(m) }},
		{name: "replayed", produce: publish(0), handle: func(m *message.Message) bool {
			if m.Metadata.Get(streamq.ReplayedFromMetadata) == "" {
				_ = streamq.DeadLetter(m, nil)
				return false
			}
			return true
		}},
		{name: "handed back", p: 1, produce: func(t *testing.T, _ *streamq.Publisher, topic string) {
			for i := 0; i < 20; i++ {
				fields, err := streamq.DefaultMarshaler{}.Marshal(topic, seqMessages(i, 1, nil)[0])
				require.NoError(t, err)
				item, err := retry.NewItem(retry.Origin{Topic: topic, Partition: 1, MaxRetries: -1}, fields)
				require.NoError(t, err)
				blob, err := item.Encode()
				require.NoError(t, err)
				rtPark(t, client, space.Delay(topic, 0), space.DelayItems(topic, 0), strconv.Itoa(i), time.Now().UnixMilli(),
					func(string) (string, bool) { return blob, true })
			}
		}, handle: func(*message.Message) bool { return true }},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			topic := "every-append-" + strings.ReplaceAll(r.name, " ", "-")
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Trim: streamq.TrimConfig{MaxLen: 5, Exact: true}})
			require.NoError(t, pub.Publish(topic, forced(100, 1, 0)...)) // registers the retention
			cfg := streamqtest.FastSub(client, "g")
			cfg.Retention.TrimInterval = 100 * time.Millisecond
			cfg.Retry.Policy = streamq.ExponentialBackoff{Base: r.backoff, Max: r.backoff, Attempts: -1}
			sub := streamqtest.NewSubscriber(t, cfg)
			ch, err := sub.Subscribe(ctx, topic)
			require.NoError(t, err)
			done := map[string]bool{}
			var mu sync.Mutex
			go func() {
				for m := range ch {
					if r.handle(m) {
						mu.Lock()
						done[m.Metadata.Get("seq")] = true
						mu.Unlock()
						m.Ack()
					} else {
						m.Nack()
					}
				}
			}()
			if r.name == "replayed" {
				dlq := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "dlq-tool"))
				dch, err := dlq.Subscribe(ctx, streamq.DLQTopic(topic))
				require.NoError(t, err)
				go func() {
					for m := range dch {
						streamq.Replay(m)
						m.Ack()
					}
				}()
			}
			r.produce(t, pub, topic)
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(done) == 21 || (r.name == "handed back" && len(done) == 20)
			}, 15*time.Second, 20*time.Millisecond, "not every message was handled")
			str := space.PartitionStream(topic, r.p)
			require.Eventually(t, func() bool { return streamqtest.XLen(t, client, str) == 5 }, 10*time.Second, 20*time.Millisecond,
				"length %d, want MaxLen 5", streamqtest.XLen(t, client, str))
		})
	}
}
