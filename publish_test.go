package streamq_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/publish"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestPublishRegistersTopicOnFirstWrite(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 3})
	require.NoError(t, pub.Publish("orders", message.NewMessage(watermill.NewUUID(), []byte("x"))))

	space := keys.New("", "")
	topics, err := client.SMembers(ctx, space.Registry()).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"orders"}, topics)
	count, err := client.HGet(ctx, space.Meta("orders"), "partitionCount").Result()
	require.NoError(t, err)
	assert.Equal(t, "3", count)
	parts, err := client.SMembers(ctx, space.Partitions("orders")).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"stream:topic:{orders:p:0}", "stream:topic:{orders:p:1}", "stream:topic:{orders:p:2}"}, parts)

	// An existing topic keeps its count whatever another publisher's default says.
	other := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 9})
	require.NoError(t, other.Publish("orders", message.NewMessage(watermill.NewUUID(), []byte("y"))))
	count, _ = client.HGet(ctx, space.Meta("orders"), "partitionCount").Result()
	assert.Equal(t, "3", count)
}

func TestPublishRoutesByKeyAndForcedPartition(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8})
	space := keys.New("", "")

	var msgs []*message.Message
	for i := 0; i < 50; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte("k"))
		m.Metadata.Set(streamq.PartitionKeyMetadata, "customer-42")
		msgs = append(msgs, m)
	}
	require.NoError(t, pub.Publish("keyed", msgs...))
	want := publish.KafkaPartition([]byte("customer-42"), 8)
	for p := 0; p < 8; p++ {
		n, err := client.XLen(ctx, space.PartitionStream("keyed", p)).Result()
		require.NoError(t, err)
		if p == want {
			assert.Equal(t, int64(50), n, "every message of one key on partition %d", p)
		} else {
			assert.Zero(t, n, "partition %d", p)
		}
	}

	forced := message.NewMessage(watermill.NewUUID(), []byte("f"))
	forced.Metadata.Set(streamq.ForcePartitionMetadata, "5")
	require.NoError(t, pub.Publish("forced", forced))
	n, err := client.XLen(ctx, space.PartitionStream("forced", 5)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)

	bad := message.NewMessage(watermill.NewUUID(), []byte("f"))
	bad.Metadata.Set(streamq.ForcePartitionMetadata, "8")
	err = pub.Publish("forced", bad)
	assert.ErrorIs(t, err, streamq.ErrPartitionOutOfRange)
	var pe *streamq.PartitionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "forced", pe.Topic)
}

func TestPublishRejectsBadTopicAndHonoursContext(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	for _, topic := range []string{"", "a{b}", "with space", "ctl\x01"} {
		assert.ErrorIs(t, pub.Publish(topic, message.NewMessage("1", nil)), streamq.ErrInvalidName, "topic %q", topic)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := message.NewMessage(watermill.NewUUID(), []byte("x"))
	m.SetContext(ctx)
	assert.ErrorIs(t, pub.Publish("ctx", m), context.Canceled)

	// Two messages with different contexts: cancelling one cancels the round trip.
	ok := message.NewMessage(watermill.NewUUID(), []byte("x"))
	assert.ErrorIs(t, pub.Publish("ctx", ok, m), context.Canceled)
}

func TestGrownTopicPickedUpByRunningPublisherAndSubscriber(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	topic := "growing"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Partitioning: streamq.PartitioningConfig{RefreshInterval: 100 * time.Millisecond}})
	cfg := streamqtest.FastSub(client, "g")
	cfg.Membership.PartitionRefreshInterval = 100 * time.Millisecond
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("before"))))
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(ch, rec)
	rec.WaitUnique(t, 1, 10*time.Second)

	_, err = partition.NewRegistry(client, keys.New("", "")).Grow(ctx, topic, 6)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m := message.NewMessage(watermill.NewUUID(), []byte("probe"))
		m.Metadata.Set(streamq.ForcePartitionMetadata, "5")
		return pub.Publish(topic, m) == nil
	}, 5*time.Second, 50*time.Millisecond, "publisher never saw the new partitions")

	for i := 0; i < 60; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte("after"))
		m.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("k%d", i))
		m.Metadata.Set("seq", strconv.Itoa(i))
		require.NoError(t, pub.Publish(topic, m))
	}
	rec.WaitUnique(t, 61, 15*time.Second)
	parts := map[int]bool{}
	for _, r := range rec.Snapshot() {
		parts[r.Partition] = true
	}
	assert.True(t, parts[5], "subscriber consumes a partition added while it ran: %v", parts)
	assert.Greater(t, len(parts), 2)
}
