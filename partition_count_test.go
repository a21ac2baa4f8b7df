package streamq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestSubscriberFirstDoesNotDecideThePartitionCount: a Subscriber with the default config
// subscribes to a topic that does not exist yet; it creates nothing, the Publisher that states
// 8 partitions creates the topic, and every message is delivered, one forced to partition 5 too.
func TestSubscriberFirstDoesNotDecideThePartitionCount(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testSubscriberFirstDoesNotDecideThePartitionCount)
}

func testSubscriberFirstDoesNotDecideThePartitionCount(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic = "consumer-first"
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err, "Subscribe returns at once, before the topic exists")
	exists, err := client.Exists(ctx, keys.New("", "").Meta(topic)).Result()
	require.NoError(t, err)
	require.Zero(t, exists, "a Subscriber without a stated count created the topic")

	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8})
	msgs := seqMessages(0, 200, nil)
	for i, m := range msgs {
		m.Metadata.Set(streamq.PartitionKeyMetadata, "key-"+strconv.Itoa(i))
	}
	forced := message.NewMessage(watermill.NewUUID(), []byte("forced"))
	forced.Metadata.Set(streamq.ForcePartitionMetadata, "5")
	forced.Metadata.Set("seq", "200")
	require.NoError(t, pub.Publish(topic, append(msgs, forced)...))
	n, _, err := partition.NewRegistry(client, keys.New("", "")).Count(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, 8, n)

	parts := map[int]bool{}
	seen := map[int]bool{}
	for len(seen) < 201 {
		m := nextMsg(t, ch, 15*time.Second)
		seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
		p, _ := streamq.PartitionFromCtx(m.Context())
		if seq == 200 {
			assert.Equal(t, 5, p, "the forced message's partition")
		}
		seen[seq] = true
		parts[p] = true
		m.Ack()
	}
	assert.Len(t, parts, 8, "keyed messages spread over the 8 partitions")
}

// TestStatedCountThatDiffersIsLoggedOnce: a Publisher or Subscriber whose stated count differs
// from an existing topic's keeps the topic's count and logs it once per topic, naming both
// counts and how to grow.
func TestStatedCountThatDiffersIsLoggedOnce(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	const topic = "eight"
	creator := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8})
	require.NoError(t, creator.Publish(topic, seqMessages(0, 1, nil)...))

	pubLog := newCaptureLogger()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 12, Partitioning: streamq.PartitioningConfig{RefreshInterval: 10 * time.Millisecond}}, pubLog)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	for i := 0; i < 5; i++ {
		require.NoError(t, pub.Publish(topic, seqMessages(i, 1, nil)...))
		time.Sleep(20 * time.Millisecond) // past the refresh interval: the count is read again
	}
	assertCountWarnings(t, pubLog, topic, 12, 8, true)

	subLog := newCaptureLogger()
	cfg := streamqtest.FastSub(client, "g")
	cfg.DefaultPartitionCount = 2
	sub, err := streamq.NewSubscriber(cfg, subLog)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	for i := 0; i < 3; i++ {
		c, cancel := context.WithCancel(ctx)
		_, err := sub.Subscribe(c, topic)
		require.NoError(t, err)
		cancel()
	}
	require.NoError(t, sub.SubscribeInitialize(topic))
	assertCountWarnings(t, subLog, topic, 2, 8, false)
}

func assertCountWarnings(t *testing.T, log *captureLogger, topic string, stated, actual int, grow bool) {
	t.Helper()
	found := log.matching("info", "another partition count")
	require.Len(t, found, 1, "one line per topic")
	assert.Equal(t, topic, found[0].fields["topic"])
	assert.Equal(t, stated, found[0].fields["configured_partitions"])
	assert.Equal(t, actual, found[0].fields["topic_partitions"])
	hint, _ := found[0].fields["hint"].(string)
	if grow {
		assert.Contains(t, hint, "streamq partitions grow "+topic+" "+strconv.Itoa(stated))
	} else {
		assert.Contains(t, hint, "cannot shrink")
	}
}

// TestNobodyStatesACount: without a stated count anywhere, the first publish creates one
// partition (the seed's fallback), and a waiting Subscriber joins it.
func TestNobodyStatesACount(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	ch, err := sub.Subscribe(ctx, "plain")
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	require.NoError(t, pub.Publish("plain", seqMessages(0, 3, nil)...))
	for i := 0; i < 3; i++ {
		m := nextMsg(t, ch, 10*time.Second)
		assert.Equal(t, strconv.Itoa(i), m.Metadata.Get("seq"))
		m.Ack()
	}
	n, exists, err := partition.NewRegistry(client, keys.New("", "")).Count(ctx, "plain")
	require.NoError(t, err)
	assert.True(t, exists)
	assert.Equal(t, 1, n)
}

// TestDeclaredGroupKeepsMessagesPublishedBeforeSubscribe: SubscribeInitialize on a topic that
// does not exist declares the group; the Publisher creates it on every partition before its
// first append, so a group starting at "$" still gets what was published before Subscribe.
func TestDeclaredGroupKeepsMessagesPublishedBeforeSubscribe(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	const topic = "declared"
	cfg := streamqtest.FastSub(client, "late")
	cfg.Membership.GroupStartID = "$"
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, sub.SubscribeInitialize(topic))

	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 20, nil)...))
	space := keys.New("", "")
	for p := 0; p < 4; p++ {
		groups, err := client.XInfoGroups(ctx, space.PartitionStream(topic, p)).Result()
		require.NoError(t, err)
		require.Len(t, groups, 1, "partition %d", p)
		assert.Equal(t, "late", groups[0].Name)
	}

	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	seen := map[string]bool{}
	for len(seen) < 20 {
		m := nextMsg(t, ch, 10*time.Second)
		seen[m.Metadata.Get("seq")] = true
		m.Ack()
	}
}
