package streamq

import (
	"errors"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"with FailureMiddleware", []message.HandlerMiddleware{FailureMiddleware(nil)}, 0, "retries exhausted (1): card declined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, client := startRedis(t)
			const topic = "nack-hint"
			cfg := fastSub(client, "g")
			cfg.Retry.Policy = ExponentialBackoff{Attempts: 1} // one retry, at once, then the DLQ
			logs := newCaptureLogger()
			sub, err := NewSubscriber(cfg, logs)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			rtRouter(t, sub, topic, func(*message.Message) error { return errDeclined }, tc.mw...)

			msg := rtMessage("order")
			require.NoError(t, newTestPublisher(t, PublisherConfig{Client: client}).Publish(topic, msg))
			dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
			assert.Equal(t, tc.wantReason, dead[0].Values["reason"])
			assert.Equal(t, tc.wantReason, rtDeadMessage(t, dead[0]).Metadata.Get(DeadLetterMetadata))
			require.Eventually(t, func() bool { return sub.Stats().Nacked == 2 }, 5*time.Second, 10*time.Millisecond)

			hints := logs.matching("info", "nacked without a reason")
			assert.Len(t, hints, tc.wantHints, "hint lines")
			for _, h := range hints {
				assert.Equal(t, nackHintText, h.msg)
				assert.Equal(t, topic, h.fields["topic"])
			}
		})
	}
}

// TestNackHintOnce: the hint is said once per Subscriber, whatever the partitions and
// goroutines that nack, and only for a nack that records no reason.
func TestNackHintOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  outcome
		md   map[string]string
		want bool
	}{
		{"plain nack", nacked, nil, true},
		{"retry of a plain nack", nacked, map[string]string{LastErrorMetadata: "nacked", RetryCountMetadata: "1"}, true},
		{"ack", acked, nil, false},
		{"stopped", stopped, nil, false},
		{"recorded error", nacked, map[string]string{LastErrorMetadata: "card declined"}, false},
		{"DeadLetter", nacked, map[string]string{DeadLetterMetadata: "invalid"}, false},
		{"Drop", nacked, map[string]string{DropMetadata: "true"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h nackHint
			logs := newCaptureLogger()
			msg := rtMessage("x")
			for k, v := range tc.md {
				msg.Metadata.Set(k, v)
			}
			done := make(chan struct{})
			for range 4 {
				go func() {
					defer func() { done <- struct{}{} }()
					for range 10 {
						h.note(logs, tc.out, msg)
					}
				}()
			}
			for range 4 {
				<-done
			}
			want := 0
			if tc.want {
				want = 1
			}
			assert.Len(t, logs.matching("info", "nacked without a reason"), want)
		})
	}
	var none *nackHint
	none.note(newCaptureLogger(), nacked, rtMessage("x")) // a DLQ view's nil hint does nothing
}
