package streamq

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Metadata streamq writes on retried and dead-lettered messages, and reads from handlers.
const (
	// RetryCountMetadata is how many times the message was retried (absent on first delivery).
	RetryCountMetadata = codec.HeaderRetryCount
	// OriginalIDMetadata is the stream id of the message's first entry.
	OriginalIDMetadata = codec.HeaderOriginalID
	// MaxRetriesMetadata is the retry cap of one message, over RetryConfig.MaxRetries: a
	// message is handled at most 1 + this many times (negative: retried for ever).
	MaxRetriesMetadata = codec.HeaderMaxRetries
	// LastErrorMetadata is the reason of the last failure (see FailureMiddleware).
	LastErrorMetadata = codec.HeaderLastError
	// RetryGroupMetadata marks a retry entry: only this consumer group delivers it.
	RetryGroupMetadata = codec.HeaderRetryGroup
	// DeadLetterMetadata asks for the message to go to the DLQ when nacked (see DeadLetter).
	DeadLetterMetadata = codec.HeaderDeadLetter
	// ReplayMetadata asks for a message consumed from a DLQ topic to be replayed to its
	// original partition when acked (see Replay).
	ReplayMetadata = codec.HeaderReplay
	// ReplayedFromMetadata is set on a replayed message: the DLQ entry id it came from.
	ReplayedFromMetadata = codec.HeaderReplayedFrom
	// DropMetadata asks for a message consumed from a DLQ topic to be deleted from the DLQ
	// when it is acked or nacked (see Drop).
	DropMetadata = codec.HeaderDrop
)

// RetryPolicy decides how late a nacked message is retried, and may state how many retries a
// message gets (RetryConfig.MaxRetries states it too: a config that states two different
// caps is rejected).
type RetryPolicy interface {
	// MaxAttempts is the retry cap the policy states, in RetryConfig.MaxRetries' terms: 0
	// states none (MaxRetries, or its default 3, decides), RetryForever, NoRetries or a
	// count.
	MaxAttempts() int
	// NextBackoff is the wait before retry number attempt (1 for the first retry).
	NextBackoff(attempt int) time.Duration
}

// ExponentialBackoff is the built-in RetryPolicy: Base * 2^(attempt-1), capped at Max
// (saturating, never overflowing), with optional Jitter. The default policy is
// ExponentialBackoff{Base: time.Second, Max: time.Minute}: 1 s, 2 s, 4 s, ...
type ExponentialBackoff struct {
	// Base is the first backoff. Zero retries at once.
	Base time.Duration
	// Max caps the backoff; below Base it is Base.
	Max time.Duration
	// Attempts is the retry cap, as RetryConfig.MaxRetries: 0 states none, RetryForever,
	// NoRetries or a count. State the cap in one of the two places.
	Attempts int
	// Jitter in [0, 1] lowers each backoff by a random fraction up to it. 0: none.
	Jitter float64
}

// defaultRetryPolicy waits 1 s, 2 s, 4 s ... capped at a minute.
func defaultRetryPolicy() ExponentialBackoff {
	return ExponentialBackoff{Base: time.Second, Max: time.Minute}
}

// MaxAttempts implements RetryPolicy.
func (e ExponentialBackoff) MaxAttempts() int { return e.Attempts }

// NextBackoff implements RetryPolicy.
func (e ExponentialBackoff) NextBackoff(attempt int) time.Duration {
	return exponential(e.Base, e.Max, attempt, e.Jitter)
}

// ErrDeadLettered wraps the error returned by DeadLetter, so a handler can return it and the
// Router nacks the message straight into the DLQ.
var ErrDeadLettered = errors.New("dead-lettered")

// DeadLetter marks msg to go to the dead-letter queue when it is nacked, skipping any retries
// left, with reason recorded. It returns an error wrapping ErrDeadLettered and reason, to be
// returned from a Router handler:
//
//	if !valid(order) {
//		return streamq.DeadLetter(msg, fmt.Errorf("invalid order %q", order.ID))
//	}
//
// Under middleware.Retry, exclude it with ShouldRetry: !errors.Is(err, streamq.ErrDeadLettered).
//
// A DLQ has no DLQ: on a message delivered from a DLQTopic, DeadLetter marks it with Drop, so
// the nack deletes the dead letter.
func DeadLetter(msg *message.Message, reason error) error {
	if d, ok := fromCtx(msg.Context()); ok && d.Letter != nil {
		Drop(msg)
	}
	if reason == nil {
		msg.Metadata.Set(DeadLetterMetadata, "dead-lettered by handler")
		return ErrDeadLettered
	}
	msg.Metadata.Set(DeadLetterMetadata, reason.Error())
	return fmt.Errorf("%w: %w", ErrDeadLettered, reason)
}

// Replay marks msg, consumed from a DLQTopic, to be appended back to its original partition
// when it is acked. The DLQ entry stays in the DLQ, unless msg is
// also marked with Drop: then the replay deletes it. On a topic that is not a DLQ the mark is
// ignored.
//
// The replay is delivered to the group that failed the message only (the letter's group),
// like a retry: the groups that handled it skip it. ReplayToAllGroups replays to every group.
func Replay(msg *message.Message) { msg.Metadata.Set(ReplayMetadata, "true") }

// ReplayToAllGroups is Replay delivered to every consumer group of the topic, not only to
// the one that failed the message.
func ReplayToAllGroups(msg *message.Message) { msg.Metadata.Set(ReplayMetadata, codec.ReplayAllGroups) }

// Drop marks msg, consumed from a DLQTopic, to be deleted from the DLQ when its handler
// finishes, acked or nacked (confirm and discard): the dead letter is acked and deleted in
// one script, for every group reading the DLQ. With Replay as well, an ack replays the letter
// and deletes it. On a topic that is not a DLQ the mark is ignored. DeadLetter on a dead
// letter marks it with Drop too.
//
//	streamq.Drop(msg) // nothing left to do with it
//	return nil
func Drop(msg *message.Message) { msg.Metadata.Set(DropMetadata, "true") }

// FailureMiddleware records a failing handler's error in the message (LastErrorMetadata), so
// the retry and the dead letter carry the reason, and dead-letters at once the errors for
// which terminal returns true (nil: none). An error wrapping ErrOutage marks the failure as
// a downstream outage (see Outage); a Snooze is no failure and is not recorded. Put it
// outside middleware.Retry, so it sees the error that is left after the in-process retries.
func FailureMiddleware(terminal func(error) bool) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			out, err := h(msg)
			if err != nil && !errors.Is(err, ErrSnoozed) {
				recordFailure(msg, err, terminal)
			}
			return out, err
		}
	}
}

func recordFailure(msg *message.Message, err error, terminal func(error) bool) {
	msg.Metadata.Set(LastErrorMetadata, err.Error())
	switch {
	case errors.Is(err, ErrOutage):
		msg.Metadata.Set(codec.HeaderOutage, err.Error())
	case terminal != nil && terminal(err) && msg.Metadata.Get(DeadLetterMetadata) == "":
		msg.Metadata.Set(DeadLetterMetadata, err.Error())
	}
}

// exponential returns base * 2^(attempt-1) capped at limit, without overflow: attempt <= 0
// reads as 1, and a cap below base gives base. jitter in [0, 1] spreads the result down by up
// to that fraction (0: none).
func exponential(base, limit time.Duration, attempt int, jitter float64) time.Duration {
	if base <= 0 {
		return 0
	}
	if limit < base {
		limit = base
	}
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		if d > limit/2 {
			d = limit
			break
		}
		d *= 2
	}
	d = min(d, limit)
	if jitter > 0 {
		d -= time.Duration(rand.Float64() * min(jitter, 1) * float64(d))
	}
	return d
}
