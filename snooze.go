package streamq

import (
	"errors"
	"fmt"
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
