package streamq

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
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

func TestMaxLenTrimsOnPublish(t *testing.T) {
	t.Parallel()
	onBackends(t, testMaxLenTrimsOnPublish)
}

func testMaxLenTrimsOnPublish(t *testing.T, client redis.UniversalClient) {
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
		pub := newTestPublisher(t, PublisherConfig{Client: client, MaxLen: 5, ExactMaxLen: tc.exact})
		for from := 0; from < tc.sends; from += 10 {
			require.NoError(t, pub.Publish(topic, seqMessages(from, 10, tc.payload)...), tc.name)
		}
		entries := streamEntries(t, client, space.PartitionStream(topic, 0))
		if tc.exact {
			assert.Equal(t, []int{15, 16, 17, 18, 19}, seqsOf(t, entries), "%s: MAXLEN = keeps exactly the newest 5", tc.name)
			continue
		}
		// MAXLEN ~ N trims only whole radix-tree nodes, so a partition keeps between N and
		// N + stream-node-max-entries (100 by default) entries.
		assert.GreaterOrEqual(t, len(entries), 5, tc.name)
		assert.LessOrEqual(t, len(entries), 5+100, tc.name)
		seqs := seqsOf(t, entries)
		assert.Equal(t, tc.sends-1, seqs[len(seqs)-1], "%s: the newest entry is kept", tc.name)
	}
}

func TestRetentionTrimsByAge(t *testing.T) {
	t.Parallel()
	onBackends(t, testRetentionTrimsByAge)
}

func testRetentionTrimsByAge(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "aged"
	str := space.PartitionStream(topic, 0)
	// g2 never consumes: without SafeRetention its unread entries are trimmed all the same.
	lazy := newTestSubscriber(t, fastSub(client, "g2"))
	require.NoError(t, lazy.SubscribeInitialize(topic))
	cfg := fastSub(client, "g1")
	cfg.Retention = time.Second
	cfg.TrimInterval = 200 * time.Millisecond
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)
	pub := newTestPublisher(t, PublisherConfig{Client: client})

	publishedAt := time.Now()
	require.NoError(t, pub.Publish(topic, seqMessages(0, 5, nil)...))
	require.Equal(t, int64(5), xlen(t, client, str))
	require.Eventually(t, func() bool { return xlen(t, client, str) == 0 }, 10*time.Second, 20*time.Millisecond,
		"entries older than Retention are trimmed")
	assert.GreaterOrEqual(t, time.Since(publishedAt), time.Second, "trimmed before they were older than Retention")

	require.NoError(t, pub.Publish(topic, seqMessages(5, 1, nil)...))
	// A few trim rounds (TrimInterval 200ms) while the fresh entry is younger than 1s.
	require.Never(t, func() bool { return xlen(t, client, str) == 0 }, 500*time.Millisecond, 20*time.Millisecond,
		"a fresh entry was trimmed")
	assert.Equal(t, []int{5}, seqsOf(t, streamEntries(t, client, str)))
}

func TestSafeRetentionWaitsForEveryGroup(t *testing.T) {
	t.Parallel()
	onBackends(t, testSafeRetentionWaitsForEveryGroup)
}

func testSafeRetentionWaitsForEveryGroup(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "safe"
	str := space.PartitionStream(topic, 0)
	lazy := newTestSubscriber(t, fastSub(client, "g2"))
	require.NoError(t, lazy.SubscribeInitialize(topic)) // g2 exists and has not read anything
	cfg := fastSub(client, "g1")
	cfg.Retention = time.Second
	cfg.SafeRetention = true
	cfg.TrimInterval = 200 * time.Millisecond
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	ackAll(ch)
	pub := newTestPublisher(t, PublisherConfig{Client: client})

	require.NoError(t, pub.Publish(topic, seqMessages(0, 3, nil)...))
	last := streamEntries(t, client, str)[2].ID
	waitCommit(t, client, topic, 0, "g1", last)
	// Well past Retention (and several trim rounds): g2 still needs them.
	require.Never(t, func() bool { return xlen(t, client, str) < 3 }, 1800*time.Millisecond, 50*time.Millisecond,
		"SafeRetention trimmed entries group g2 has not read")

	ch2, err := lazy.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		nextMsg(t, ch2, 10*time.Second).Ack()
	}
	waitCommit(t, client, topic, 0, "g2", last)
	require.Eventually(t, func() bool { return xlen(t, client, str) == 0 }, 10*time.Second, 20*time.Millisecond,
		"entries every group acked are trimmed on a later round")
}

// deadLetterAll dead-letters every message of ch until it closes.
func deadLetterAll(ch <-chan *message.Message) {
	go func() {
		for m := range ch {
			_ = DeadLetter(m, errors.New("unwanted"))
			m.Nack()
		}
	}()
}

func TestDLQRetentionByLength(t *testing.T) {
	t.Parallel()
	onBackends(t, testDLQRetentionByLength)
}

func testDLQRetentionByLength(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "dlq-len"
	dlqKey := space.DLQ(topic, 0)
	cfg := fastSub(client, "g1")
	cfg.DLQRetentionMaxLen = 3
	cfg.TrimInterval = 200 * time.Millisecond
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	deadLetterAll(ch)
	pub := newTestPublisher(t, PublisherConfig{Client: client})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 6, nil)...))

	require.Eventually(t, func() bool {
		return sub.Stats().DeadLettered == 6 && xlen(t, client, dlqKey) == 3
	}, 10*time.Second, 20*time.Millisecond, "6 dead letters trimmed to 3")
	assert.Equal(t, []int{3, 4, 5}, seqsOf(t, streamEntries(t, client, dlqKey)), "the newest dead letters are kept")
}

func TestDLQRetentionByAge(t *testing.T) {
	t.Parallel()
	onBackends(t, testDLQRetentionByAge)
}

func testDLQRetentionByAge(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "dlq-age"
	dlqKey := space.DLQ(topic, 0)
	cfg := fastSub(client, "g1")
	cfg.DLQRetention = time.Second
	cfg.TrimInterval = 200 * time.Millisecond
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	deadLetterAll(ch)
	pub := newTestPublisher(t, PublisherConfig{Client: client})

	require.NoError(t, pub.Publish(topic, seqMessages(0, 3, nil)...))
	require.Eventually(t, func() bool { return xlen(t, client, dlqKey) == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return xlen(t, client, dlqKey) == 0 }, 10*time.Second, 20*time.Millisecond,
		"dead letters older than DLQRetention are removed")

	require.NoError(t, pub.Publish(topic, seqMessages(3, 1, nil)...))
	require.Eventually(t, func() bool { return xlen(t, client, dlqKey) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Never(t, func() bool { return xlen(t, client, dlqKey) == 0 }, 400*time.Millisecond, 20*time.Millisecond,
		"a fresh dead letter was removed")
	assert.Equal(t, []int{3}, seqsOf(t, streamEntries(t, client, dlqKey)))
	assert.Equal(t, int64(4), sub.Stats().DeadLettered)
}

func TestOrphanedPayloadsSwept(t *testing.T) {
	t.Parallel()
	onBackends(t, testOrphanedPayloadsSwept)
}

func testOrphanedPayloadsSwept(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "orphans"
	str, index := space.PartitionStream(topic, 0), space.PayloadIndex(topic, 0)
	pub := newTestPublisher(t, PublisherConfig{Client: client})
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

	cfg := fastSub(client, "g1")
	cfg.GroupStartID = "$" // the group never reads (and acks) the kept entry
	cfg.TrimInterval = 200 * time.Millisecond
	sub := newTestSubscriber(t, cfg)
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
