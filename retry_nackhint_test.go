package streamq_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestNackWithoutReasonHint: a Router handler that always fails is nacked twice (a delivery
// and its one retry); without FailureMiddleware the Subscriber says once how to get the
// reason and the letter says only "nacked"; with it, nothing is said and the letter carries
// the handler's error.
func TestNackWithoutReasonHint(t *testing.T) {
	t.Parallel()
	errDeclined := errors.New("card declined")
	tests := []struct {
		name       string
		mw         []message.HandlerMiddleware
		wantHints  int
		wantReason string
	}{
		{"without FailureMiddleware", nil, 1, "retries exhausted (1): nacked"},
		{"with FailureMiddleware", []message.HandlerMiddleware{streamq.FailureMiddleware(nil)}, 0, "retries exhausted (1): card declined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, client := streamqtest.StartRedis(t)
			const topic = "nack-hint"
			cfg := streamqtest.FastSub(client, "g")
			cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 1} // one retry, at once, then the DLQ
			logs := newCaptureLogger()
			sub, err := streamq.NewSubscriber(cfg, logs)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			rtRouter(t, sub, topic, func(*message.Message) error { return errDeclined }, tc.mw...)

			msg := rtMessage("order")
			require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))
			dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
			assert.Equal(t, tc.wantReason, dead[0].Values["reason"])
			assert.Equal(t, tc.wantReason, rtDeadMessage(t, dead[0]).Metadata.Get(streamq.DeadLetterMetadata))
			require.Eventually(t, func() bool { return sub.Stats().Nacked == 2 }, 5*time.Second, 10*time.Millisecond)

			hints := logs.matching("info", "nacked without a reason")
			assert.Len(t, hints, tc.wantHints, "hint lines")
			for _, h := range hints {
				assert.Contains(t, h.msg, "add streamq.FailureMiddleware to the Router")
				assert.Equal(t, topic, h.fields["topic"])
			}
		})
	}
}
