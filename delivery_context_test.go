package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
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
	_, client := startRedis(t)
	const topic = "msg-ctx"
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client})
	publishKeyed(t, pub, topic, 0, 1, 1)
	_, ch := subscribeMember(t, client, topic, "g", "a", 1, nil)

	m := receiveOne(t, ch, 10*time.Second)
	ctx := m.Context()
	require.NoError(t, ctx.Err())
	m.Ack()
	waitDone(t, ctx, 10*time.Second)

	publishKeyed(t, pub, topic, 1, 2, 1)
	m = receiveOne(t, ch, 10*time.Second)
	ctx = m.Context()
	require.False(t, isDone(ctx))
	m.Nack()
	waitDone(t, ctx, 10*time.Second)
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	again := receiveOne(t, ch, 10*time.Second) // the retry of the nacked message
	require.NoError(t, again.Context().Err())
	again.Ack()
}
