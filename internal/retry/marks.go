package retry

import (
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// What the engine reads of a delivered message's metadata: its retries, why it last failed,
// a snooze its handler asked for, a delay Watermill's DelayOnError set.

// Count reads codec.HeaderRetryCount; missing or bad reads as 0.
func Count(md message.Metadata) int {
	v := md.Get(codec.HeaderRetryCount)
	if v == "" {
		return 0 // the common case, without Atoi's error allocation
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// FailureReason is the handler's recorded error (codec.HeaderLastError), or "nacked".
func FailureReason(m *message.Message) string {
	if r := m.Metadata.Get(codec.HeaderLastError); r != "" {
		return r
	}
	return "nacked"
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

// snoozeCount reads codec.HeaderSnoozeCount; missing or bad reads as 0.
func snoozeCount(md message.Metadata) int {
	n, err := strconv.Atoi(md.Get(codec.HeaderSnoozeCount))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// delayOnErrorBackoff returns the delay middleware.DelayOnError wrote into the message during
// this delivery, or -1. Delivery removes _watermill_delayed_until from the handler's copy, so
// finding it again means the middleware set it now.
func delayOnErrorBackoff(m *message.Message) time.Duration {
	if m.Metadata.Get(delay.DelayedUntilKey) == "" {
		return -1
	}
	d, err := time.ParseDuration(m.Metadata.Get(delay.DelayedForKey))
	if err != nil || d < 0 {
		return -1
	}
	return d
}
