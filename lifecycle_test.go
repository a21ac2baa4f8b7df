package streamq_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestCloseIsIdempotentLeakFreeAndKeepsClient(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	require.NoError(t, client.Ping(context.Background()).Err())
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, nil)
	require.NoError(t, err)
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), nil)
	require.NoError(t, err)
	ch1, err := sub.Subscribe(context.Background(), "life")
	require.NoError(t, err)
	ch2, err := sub.Subscribe(context.Background(), "life-2")
	require.NoError(t, err)

	require.NoError(t, pub.Publish("life", message.NewMessage(watermill.NewUUID(), []byte("a"))))
	select {
	case msg := <-ch1:
		msg.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}
	// A message left in flight: Close must not hang past CloseTimeout.
	require.NoError(t, pub.Publish("life", message.NewMessage(watermill.NewUUID(), []byte("b"))))
	inFlight := <-ch1

	require.NoError(t, pub.Close())
	require.NoError(t, pub.Close())
	require.NoError(t, sub.Close())
	require.NoError(t, sub.Close())
	select {
	case <-inFlight.Context().Done():
	default:
		t.Fatal("in-flight message context not cancelled by Close")
	}
	_, open := <-ch1
	assert.False(t, open)
	_, open = <-ch2
	assert.False(t, open)

	assert.ErrorIs(t, pub.Publish("life", message.NewMessage("x", nil)), streamq.ErrPublisherClosed)
	_, err = sub.Subscribe(context.Background(), "life")
	assert.ErrorIs(t, err, streamq.ErrSubscriberClosed)
	require.NoError(t, client.Ping(context.Background()).Err(), "the caller's client stays usable")

	space := keys.New("", "")
	for p := 0; p < 4; p++ {
		n, err := client.Exists(context.Background(), space.Lease("life", p, "g")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "lease of partition %d released", p)
	}
	n, err := client.ZCard(context.Background(), space.Members("life", "g")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "member left the group")
}

func TestSubscribeContextCancelClosesOnlyThatSubscription(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ch1, err := sub.Subscribe(ctx, "ctx-a")
	require.NoError(t, err)
	ch2, err := sub.Subscribe(context.Background(), "ctx-b")
	require.NoError(t, err)
	cancel()
	_, open := <-ch1
	assert.False(t, open)
	select {
	case <-ch2:
		t.Fatal("other subscription closed")
	default:
	}
	require.NoError(t, sub.Close())
}

func TestMalformedEntryDeadLetteredAndCounted(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	logger := watermill.NewCaptureLogger()
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), logger)
	require.NoError(t, err)
	defer sub.Close()
	topic := "malformed"
	require.NoError(t, sub.SubscribeInitialize(topic))
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	stream := keys.New("", "").PartitionStream(topic, 0)

	publish := func(i int) {
		m := message.NewMessage(watermill.NewUUID(), []byte(strconv.Itoa(i)))
		require.NoError(t, pub.Publish(topic, m))
	}
	publish(0)
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{"only": "one field"}}).Err())
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: map[string]any{streamq.UUIDField: "u", streamq.PayloadField: "p", streamq.MetadataField: "\xc1garbage"}}).Err())
	publish(1)

	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		msg := <-ch
		assert.Equal(t, strconv.Itoa(i), string(msg.Payload))
		msg.Ack()
	}
	publish(2)
	select {
	case msg := <-ch:
		assert.Equal(t, "2", string(msg.Payload), "subscription still open after bad entries")
		msg.Ack()
	case <-time.After(10 * time.Second):
		t.Fatal("subscription stuck after malformed entries")
	}
	assert.Equal(t, int64(2), sub.Stats().Malformed)
	dead, err := client.XRange(ctx, keys.New("", "").DLQ(topic, 0), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, dead, 2, "both bad entries are in the partition's DLQ")
	assert.Contains(t, dead[0].Values["reason"], "malformed entry")
	assert.Contains(t, dead[0].Values["raw"], "one field")
	assert.Equal(t, "0", dead[0].Values["partitionId"])
	logged := 0
	for _, c := range logger.Captured()[watermill.ErrorLogLevel] {
		if errors.Is(c.Err, streamq.ErrMalformedEntry) {
			logged++
		}
	}
	assert.Equal(t, 2, logged, "each malformed entry logged once")
	require.Eventually(t, func() bool {
		p, err := client.XPending(ctx, stream, "g").Result()
		return err == nil && p.Count == 0
	}, 5*time.Second, 20*time.Millisecond, "bad entries are acked, not left pending")
}
