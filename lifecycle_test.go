package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
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

// TestCloseKeepsTheLeaseWhileInFlightMessagesFinish: a graceful Close waits up to
// CloseTimeout for a handler slower than LeaseTTL, and its ack still lands: the member keeps
// renewing its leases until each partition has flushed its acks, so nothing it handled is
// delivered again.
func TestCloseKeepsTheLeaseWhileInFlightMessagesFinish(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "slow-close"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Membership.LeaseTTL = 2 * time.Second
	cfg.DefaultPartitionCount = 1
	cfg.Delivery.CloseTimeout = 3 * cfg.Membership.LeaseTTL
	sub := streamqtest.NewSubscriber(t, cfg)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("slow"))))
	var msg *message.Message
	select {
	case msg = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}

	closed := make(chan error, 1)
	go func() { closed <- sub.Close() }()
	time.Sleep(cfg.Membership.LeaseTTL * 3 / 2) // the handler outlives a lease not renewed
	msg.Ack()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(2 * cfg.Delivery.CloseTimeout):
		t.Fatal("Close did not return")
	}

	stream := keys.New("", "").PartitionStream(topic, 0)
	pending, err := client.XPending(context.Background(), stream, "g").Result()
	require.NoError(t, err)
	assert.Zero(t, pending.Count, "the slow handler's ack was flushed before the lease went")
	n, err := client.Exists(context.Background(), keys.New("", "").Lease(topic, 0, "g")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "and the lease released")
}
