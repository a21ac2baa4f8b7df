package streamq

import (
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
)

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

// letterOf is a dead letter's record as its handler reads it.
func letterOf(r *dlq.Record) DeadLetterInfo {
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
