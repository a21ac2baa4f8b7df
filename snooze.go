package streamq

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// ErrSnoozed wraps the error returned by Snooze.
var ErrSnoozed = errors.New("snoozed")

// Snooze asks for msg to come back after d, without counting a retry: the handler returns
// the error Snooze returns (or nacks msg), and msg is handled again in d, as a retry is, with
// its retry count and last error unchanged. Use it for "not yet" (a payment still
// processing, a rate limit's reset time), not for failures:
//
//	if order.Status == "pending" {
//		return nil, streamq.Snooze(msg, 30*time.Second)
//	}
//
// A message may be snoozed RetryConfig.MaxSnoozes times (default 100); a snooze beyond that
// is a failure, counted against its retry cap. A snoozed message goes back to the end of its
// partition, as a retry does. Under middleware.Retry, exclude it with ShouldRetry:
// !errors.Is(err, streamq.ErrSnoozed).
func Snooze(msg *message.Message, d time.Duration) error {
	d = max(d, 0)
	msg.Metadata.Set(codec.HeaderSnooze, d.String())
	return fmt.Errorf("%w for %s", ErrSnoozed, d)
}

// snoozedFor is the delay a handler asked for with Snooze during this delivery; false when
// it asked for none.
func snoozedFor(m *message.Message) (time.Duration, bool) {
	v := m.Metadata.Get(codec.HeaderSnooze)
	if v == "" {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, true
	}
	return d, true
}

// snoozeCount reads HeaderSnoozeCount; missing or bad reads as 0.
func snoozeCount(md message.Metadata) int {
	n, err := strconv.Atoi(md.Get(codec.HeaderSnoozeCount))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
