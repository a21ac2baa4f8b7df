package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/consume"
	"github.com/streamq-dev/streamq/internal/keys"
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

// DeadLetterInfo is the record of a dead letter, as a handler of a DLQTopic subscription reads
// it with DeadLetterFromCtx (the message itself is the delivered message). Fields a DLQ
// entry written by another tool lacks are zero.
type DeadLetterInfo struct {
	// Reason is why the message was dead-lettered: the handler's DeadLetter reason,
	// "retries exhausted (N): last error", or what made the entry unreadable.
	Reason string
	// Group is the consumer group that failed the message.
	Group string
	// OriginalTopic and OriginalPartition are where the message was published.
	OriginalTopic     string
	OriginalPartition int
	// OriginalStreamID is the stream id of the failed delivery (a retry's own id when the
	// message was retried); OriginalMessageID the id of its first entry, as
	// OriginalIDFromCtx returns it.
	OriginalStreamID  string
	OriginalMessageID string
	// RetryCount is how many times the message was retried before it was dead-lettered;
	// MaxRetries its retry cap then.
	RetryCount int
	MaxRetries int
	// Timestamp is when the message was first published (the time of OriginalMessageID);
	// FailedAt when it was dead-lettered.
	Timestamp time.Time
	FailedAt  time.Time
	// Raw is the JSON of the fields of an entry that could not be decoded (a poison entry:
	// its delivered message has a new UUID and the entry's payload field, if any); empty
	// otherwise.
	Raw string
}

// letterOf is the record of the dead letter delivered as d (on a DLQTopic subscription) as its
// handler reads it.
func letterOf(d *consume.Delivery) DeadLetterInfo {
	r := d.Letter
	return DeadLetterInfo{
		Reason: r.Reason, Group: r.Group, OriginalTopic: r.OriginalTopic, OriginalPartition: r.Partition,
		OriginalStreamID: r.OriginalStreamID, OriginalMessageID: r.OriginalMessageID,
		RetryCount: r.RetryCount, MaxRetries: r.MaxRetries, Timestamp: r.Timestamp, FailedAt: r.FailedAt, Raw: r.Raw,
	}
}

// Metadata set on a dead letter whose offloaded payload was gone when it was read.
const (
	PayloadMissingMetadata    = "x-payload-missing"
	PayloadMissingRefMetadata = "x-payload-missing-ref"
)

// DLQSuffix ends the Watermill topic name of a topic's dead-letter queue. Topic names ending
// with it are reserved.
const DLQSuffix = ":dlq"

// DLQTopic is the topic to Subscribe to for the dead letters of topic: every partition's DLQ,
// with the same leases, groups and ordering as a normal topic.
func DLQTopic(topic string) string { return topic + DLQSuffix }

// validateTopic checks a topic to publish to: a valid name, and not a DLQ name.
func validateTopic(topic string) error { return keys.ValidateTopic(topic) }
