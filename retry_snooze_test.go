package streamq_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestSnoozeComesBackWithoutARetry: a handler snoozes each message twice, then handles it.
// Each comes back three times in all, with no retry counted, no last error and its snoozes
// counted; nothing is dead-lettered.
func TestSnoozeComesBackWithoutARetry(t *testing.T) {
	t.Parallel()
	client := redistestClient(t)
	streamqtest.PublishNumbered(t, client, "snooze", 20)
	cfg := outageSub(client)
	cfg.Retry.MaxRetries = streamq.NoRetries // a snooze counted as a failure would dead-letter at once
	sub := streamqtest.NewSubscriber(t, cfg)
	var mu sync.Mutex
	seen := map[string][]string{} // seq -> the snooze count at each delivery
	rtRouter(t, sub, "snooze", func(msg *message.Message) error {
		retries, _ := streamq.RetryCountFromCtx(msg.Context())
		_, hasErr := streamq.LastErrorFromCtx(msg.Context())
		assert.Zero(t, retries)
		assert.False(t, hasErr)
		mu.Lock()
		defer mu.Unlock()
		seq := msg.Metadata.Get("seq")
		seen[seq] = append(seen[seq], msg.Metadata.Get(codec.HeaderSnoozeCount))
		if len(seen[seq]) < 3 {
			return streamq.Snooze(msg, 200*time.Millisecond)
		}
		return nil
	}, streamq.FailureMiddleware(nil))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		done := 0
		for _, s := range seen {
			if len(s) >= 3 {
				done++
			}
		}
		return done == 20
	}, 30*time.Second, 50*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for seq, counts := range seen {
		assert.Equal(t, []string{"", "1", "2"}, counts, "message %s", seq)
	}
	assert.Zero(t, sub.Stats().DeadLettered)
}

// TestSnoozeBeyondTheBoundIsAFailure: a message snoozed for ever is snoozed MaxSnoozes
// times, then each snooze is a failure: it is retried to its cap and dead-lettered, saying
// why.
func TestSnoozeBeyondTheBoundIsAFailure(t *testing.T) {
	t.Parallel()
	client := redistestClient(t)
	streamqtest.PublishNumbered(t, client, "snooze-bound", 1)
	cfg := outageSub(client)
	cfg.Retry.MaxSnoozes, cfg.Retry.MaxRetries = 2, 1
	cfg.Retry.Policy = streamq.ExponentialBackoff{} // retries at once
	sub := streamqtest.NewSubscriber(t, cfg)
	var mu sync.Mutex
	calls := 0
	rtRouter(t, sub, "snooze-bound", func(msg *message.Message) error {
		mu.Lock()
		calls++
		mu.Unlock()
		return streamq.Snooze(msg, 10*time.Millisecond)
	}, streamq.FailureMiddleware(nil))
	require.Eventually(t, func() bool { return dlqLen(t, client, "snooze-bound", 4) == 1 }, 30*time.Second, 50*time.Millisecond)
	var letters []redis.XMessage
	for p := range 4 {
		letters = append(letters, rtDLQ(t, client, "snooze-bound", p)...)
	}
	require.Len(t, letters, 1)
	assert.Equal(t, "retries exhausted (1): snoozed more than 2 times", letters[0].Values["reason"])
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 4, calls, "two snoozes, then the first delivery and its one retry failed")
}
