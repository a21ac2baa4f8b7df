package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// waitDone waits for ctx to end, failing the test after timeout.
func waitDone(t *testing.T, ctx context.Context, timeout time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(timeout):
		t.Fatalf("message context still live after %s", timeout)
	}
}

// On a real subscription: a message's context is live while it is handled and ends after
// its Ack or Nack, as docs/consuming.md promises.
func TestMessageContextEndsAfterAckAndNack(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "msg-ctx"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
	_, ch := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, nil)

	m := streamqtest.ReceiveOne(t, ch, 10*time.Second)
	ctx := m.Context()
	require.NoError(t, ctx.Err())
	m.Ack()
	waitDone(t, ctx, 10*time.Second)

	streamqtest.PublishKeyed(t, pub, topic, 1, 2, 1)
	m = streamqtest.ReceiveOne(t, ch, 10*time.Second)
	ctx = m.Context()
	require.False(t, isDone(ctx))
	m.Nack()
	waitDone(t, ctx, 10*time.Second)
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	again := streamqtest.ReceiveOne(t, ch, 10*time.Second) // the retry of the nacked message
	require.NoError(t, again.Context().Err())
	again.Ack()
}
