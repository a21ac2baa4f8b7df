package consume

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/retry"
)

func hints(logs *watermill.CaptureLoggerAdapter) int {
	n := 0
	for _, m := range logs.Captured()[watermill.InfoLogLevel] {
		if m.Msg == nackHintText {
			n++
		}
	}
	return n
}

// TestNackHintOnce: the hint is said once per Subscriber, whatever the partitions and
// goroutines that nack, and only for a nack that records no reason.
func TestNackHintOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  retry.Outcome
		md   map[string]string
		want bool
	}{
		{"plain nack", retry.Nacked, nil, true},
		{"retry of a plain nack", retry.Nacked, map[string]string{codec.HeaderLastError: "nacked", codec.HeaderRetryCount: "1"}, true},
		{"ack", retry.Acked, nil, false},
		{"stopped", retry.Stopped, nil, false},
		{"recorded error", retry.Nacked, map[string]string{codec.HeaderLastError: "card declined"}, false},
		{"DeadLetter", retry.Nacked, map[string]string{codec.HeaderDeadLetter: "invalid"}, false},
		{"Drop", retry.Nacked, map[string]string{codec.HeaderDrop: "true"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h nackHint
			logs := watermill.NewCaptureLogger()
			msg := message.NewMessage("x", nil)
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
			assert.Equal(t, want, hints(logs))
		})
	}
	var none *nackHint
	none.note(watermill.NewCaptureLogger(), retry.Nacked, message.NewMessage("x", nil)) // a DLQ view's nil hint does nothing
}
