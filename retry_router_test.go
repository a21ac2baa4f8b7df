package streamq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// rtRouter runs a Router with one consumer handler on topic; router-level middleware runs in
// the order given, the first outermost (watermill message/router.go, handler.run).
func rtRouter(t *testing.T, sub message.Subscriber, topic string, h message.NoPublishHandlerFunc, mw ...message.HandlerMiddleware) {
	t.Helper()
	r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, streamqtest.Logger())
	require.NoError(t, err)
	r.AddMiddleware(mw...)
	r.AddConsumerHandler("handler-"+topic, topic, sub, h)
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		assert.NoError(t, r.Close())
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("router did not stop")
		}
	})
	select {
	case <-r.Running():
	case err := <-done:
		t.Fatalf("router stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("router not running")
	}
}

// rtCalls records the handler calls of a Router test.
type rtCalls struct {
	log rtLog
}

func (c *rtCalls) record(msg *message.Message) int {
	c.log.add(rtDeliveryOf(msg))
	return c.log.len()
}

// rtAlignSubsecond waits until the wall clock's fraction of a second is in [from, to).
func rtAlignSubsecond(from, to time.Duration) {
	for {
		f := time.Duration(time.Now().Nanosecond())
		if f >= from && f < to {
			return
		}
		wait := from - f
		if f >= from {
			wait += time.Second
		}
		<-time.After(wait)
	}
}

// TestRouterDelayOnErrorSetsTheRetryBackoff: middleware.DelayOnError's delay replaces the
// RetryPolicy's backoff (5s here, so a gap under 4s proves the middleware's value was used).
func TestRouterDelayOnErrorSetsTheRetryBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// The first delivery happens just after the publish; where it falls in its second
		// decides whether the 2nd delay (600ms, written ~300ms later) ends in the same
		// second as the 1st (300ms): [150ms, 400ms) never, [720ms, 800ms) always.
		from, to time.Duration
	}{
		{"new delay ends in a later second", 150 * time.Millisecond, 400 * time.Millisecond},
		{"new delay ends in the same second", 720 * time.Millisecond, 800 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, client := streamqtest.StartRedis(t)
			const topic = "delay-on-error"
			cfg := streamqtest.FastSub(client, "g")
			cfg.Retry.Policy = streamq.ExponentialBackoff{Base: 5 * time.Second, Attempts: 5}
			cfg.DefaultPartitionCount = 1 // the topic exists before anything is published
			sub := streamqtest.NewSubscriber(t, cfg)
			require.NoError(t, sub.SubscribeInitialize(topic))
			calls := &rtCalls{}
			rtRouter(t, sub, topic, func(msg *message.Message) error {
				if n := calls.record(msg); n <= 2 {
					return fmt.Errorf("failure %d", n)
				}
				return nil
			}, (&middleware.DelayOnError{InitialInterval: 300 * time.Millisecond, MaxInterval: 2 * time.Second, Multiplier: 2}).Middleware)
			streamqtest.WaitOwners(t, client, topic, "g", 1, func(c map[string]int) bool { return c[""] == 0 })

			rtAlignSubsecond(tc.from, tc.to)
			require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, rtMessage("x")))
			rtEventually(t, func() bool { return calls.log.len() >= 3 }, 15*time.Second, calls.log.dump)
			got := calls.log.all()
			gap1, gap2 := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at)
			t.Logf("first delivery at .%03d s; gaps %s, %s", got[0].at.Nanosecond()/1e6, gap1, gap2)
			assert.GreaterOrEqual(t, gap1, 300*time.Millisecond-clockSlack)
			assert.GreaterOrEqual(t, gap2, 600*time.Millisecond-clockSlack)
			assert.Less(t, gap1, 4*time.Second, "DelayOnError's 300ms was not used")
			assert.Less(t, gap2, 4*time.Second, "DelayOnError's 600ms was not used")
			for i, d := range got {
				assert.Equal(t, i, d.retries)
				assert.Equal(t, got[0].streamID, d.originalID)
			}
			assert.Equal(t, "nacked", got[2].lastError, "without FailureMiddleware the reason is only the nack")
			require.Never(t, func() bool { return calls.log.len() > 3 }, 300*time.Millisecond, 20*time.Millisecond)
			rtSettled(t, client, topic, "g", 0)
		})
	}
}

// TestRouterInProcessRetryInsideStreamqRetry: middleware.Retry inside (closer to the
// handler) retries in process; what is still failing after it is nacked and retried by
// streamq.
func TestRouterInProcessRetryInsideStreamqRetry(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "retry-inside"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 3} // zero backoff: requeued at once
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, sub.SubscribeInitialize(topic))
	calls := &rtCalls{}
	rtRouter(t, sub, topic, func(msg *message.Message) error {
		if n := calls.record(msg); n <= 5 {
			return fmt.Errorf("failure %d", n)
		}
		return nil
	},
		streamq.FailureMiddleware(nil), // outermost: sees what is left after the in-process retries
		middleware.Retry{MaxRetries: 2, InitialInterval: 10 * time.Millisecond}.Middleware,
	)
	msg := rtMessage("x")
	require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))

	rtEventually(t, func() bool { return calls.log.len() >= 6 }, 10*time.Second, calls.log.dump)
	require.Never(t, func() bool { return calls.log.len() > 6 }, 300*time.Millisecond, 20*time.Millisecond)
	rtSettled(t, client, topic, "g", 0)

	got := calls.log.all()
	deliveries := map[string]int{}
	for _, d := range got {
		deliveries[d.streamID]++
	}
	assert.Len(t, deliveries, 2, "streamq delivered the message twice")
	for id, n := range deliveries {
		assert.Equal(t, 3, n, "delivery %s ran the handler 1 + 2 times", id)
	}
	last := got[len(got)-1]
	assert.Equal(t, 1, last.retries)
	assert.Equal(t, got[0].streamID, last.originalID)
	assert.Equal(t, "failure 3", last.lastError, "the error left after the in-process retries")
	assert.Empty(t, rtDLQ(t, client, topic, 0))
	stats := sub.Stats()
	assert.Equal(t, int64(1), stats.Nacked)
	assert.Equal(t, int64(1), stats.Acked)
}

// TestRouterPoisonQueuePublishesWithStreamq: middleware.PoisonQueue with a streamq Publisher
// as the poison publisher salvages the message; streamq acks the original, no retry, no DLQ.
func TestRouterPoisonQueuePublishesWithStreamq(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic, poisonTopic = "poisoned-source", "poison"
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	require.NoError(t, sub.SubscribeInitialize(topic))
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	poisonSub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "poison-readers"))
	poisoned, err := poisonSub.Subscribe(context.Background(), poisonTopic)
	require.NoError(t, err)

	pq, err := middleware.PoisonQueue(pub, poisonTopic)
	require.NoError(t, err)
	calls := &rtCalls{}
	rtRouter(t, sub, topic, func(msg *message.Message) error {
		calls.record(msg)
		return errors.New("cannot handle it")
	}, pq)
	msg := rtMessage("bad")
	require.NoError(t, pub.Publish(topic, msg))

	got := rtNext(t, poisoned, 10*time.Second)
	got.Ack()
	assert.Equal(t, msg.UUID, got.UUID)
	assert.Equal(t, "bad", string(got.Payload))
	assert.Equal(t, "cannot handle it", got.Metadata.Get(middleware.ReasonForPoisonedKey))
	assert.Equal(t, topic, got.Metadata.Get(middleware.PoisonedTopicKey))
	assert.Equal(t, "handler-"+topic, got.Metadata.Get(middleware.PoisonedHandlerKey))

	rtSettled(t, client, topic, "g", 0)
	require.Never(t, func() bool { return calls.log.len() > 1 }, 300*time.Millisecond, 20*time.Millisecond, "retried")
	assert.Empty(t, rtDLQ(t, client, topic, 0), "not in streamq's DLQ")
	stats := sub.Stats()
	assert.Zero(t, stats.Nacked)
	assert.Zero(t, stats.DeadLettered)
	assert.Equal(t, int64(1), stats.Acked)
}

var errBadInput = errors.New("bad input")

// TestFailureMiddlewareTerminalAndLastError: terminal errors go to the DLQ at once with the
// error as reason; other errors are retried with the error in LastErrorFromCtx.
func TestFailureMiddlewareTerminalAndLastError(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "failure-mw"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 5}
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, sub.SubscribeInitialize(topic))
	calls := &rtCalls{}
	var mu sync.Mutex
	failed := map[string]bool{}
	rtRouter(t, sub, topic, func(msg *message.Message) error {
		calls.record(msg)
		switch string(msg.Payload) {
		case "bad":
			return fmt.Errorf("order 7: %w", errBadInput)
		case "flaky":
			mu.Lock()
			defer mu.Unlock()
			if !failed[msg.UUID] {
				failed[msg.UUID] = true
				return errors.New("temporary outage")
			}
		}
		return nil
	}, streamq.FailureMiddleware(func(err error) bool { return errors.Is(err, errBadInput) }))
	bad, flaky := rtMessage("bad"), rtMessage("flaky")
	require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, bad, flaky))

	dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
	rtEventually(t, func() bool { return len(calls.log.of(flaky.UUID, "")) >= 2 }, 10*time.Second, calls.log.dump)
	require.Never(t, func() bool { return calls.log.len() > 3 }, 300*time.Millisecond, 20*time.Millisecond)
	rtSettled(t, client, topic, "g", 0)

	assert.Len(t, calls.log.of(bad.UUID, ""), 1, "a terminal error is not retried")
	assert.Equal(t, "order 7: bad input", dead[0].Values["reason"])
	assert.Equal(t, "0", dead[0].Values["retryCount"])
	assert.Equal(t, bad.UUID, dead[0].Values[streamq.UUIDField])
	deadMsg := rtDeadMessage(t, dead[0])
	assert.Equal(t, "order 7: bad input", deadMsg.Metadata.Get(streamq.LastErrorMetadata))
	assert.Equal(t, "order 7: bad input", deadMsg.Metadata.Get(streamq.DeadLetterMetadata))
	assert.Contains(t, dead[0].Values["headers"], streamq.LastErrorMetadata)

	f := calls.log.of(flaky.UUID, "")
	require.Len(t, f, 2)
	assert.False(t, f[0].hasLastError, "first delivery has no last error")
	assert.True(t, f[1].hasLastError)
	assert.Equal(t, "temporary outage", f[1].lastError)
	assert.Equal(t, 1, f[1].retries)
	assert.Equal(t, int64(1), sub.Stats().DeadLettered)
}

// TestDeadLetterFromRouterHandler: returning streamq.DeadLetter(msg, err) skips the retries
// left and dead-letters the message at once.
func TestDeadLetterFromRouterHandler(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "dead-letter-helper"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: -1} // a plain nack would retry for ever
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, sub.SubscribeInitialize(topic))
	errInvalid := errors.New("invalid order")
	calls := &rtCalls{}
	returned := make(chan error, 10)
	rtRouter(t, sub, topic, func(msg *message.Message) error {
		calls.record(msg)
		err := streamq.DeadLetter(msg, fmt.Errorf("order %q: %w", "o-1", errInvalid))
		returned <- err
		return err
	})
	msg := rtMessage("x")
	msg.Metadata.Set("k", "v")
	require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))

	dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
	var err error
	select {
	case err = <-returned:
	case <-time.After(time.Second):
		t.Fatal("handler not called")
	}
	assert.ErrorIs(t, err, streamq.ErrDeadLettered)
	assert.ErrorIs(t, err, errInvalid)
	require.Never(t, func() bool { return calls.log.len() > 1 }, 300*time.Millisecond, 20*time.Millisecond, "retried")
	rtSettled(t, client, topic, "g", 0)

	assert.Equal(t, `order "o-1": invalid order`, dead[0].Values["reason"])
	assert.Equal(t, "0", dead[0].Values["retryCount"])
	assert.Equal(t, "g", dead[0].Values["group"])
	deadMsg := rtDeadMessage(t, dead[0])
	assert.Equal(t, msg.UUID, deadMsg.UUID)
	assert.Equal(t, "v", deadMsg.Metadata.Get("k"), "the message's metadata is kept")
	assert.Equal(t, `order "o-1": invalid order`, deadMsg.Metadata.Get(streamq.DeadLetterMetadata))
	stats := sub.Stats()
	assert.Equal(t, int64(1), stats.DeadLettered)
	assert.Equal(t, int64(1), stats.Nacked)
}
