package streamqotel

import "go.opentelemetry.io/otel/attribute"

// System is the messaging.system of every span: "streamq", not "redis": the destination,
// partition, group and retry attributes mean streamq's topics (several streams each),
// partitions and consumer groups over Redis, not a Redis stream key or an XREADGROUP group,
// and OpenTelemetry's conventions define no value for Redis Streams. Redis itself shows as
// the db.system "redis" spans of go-redis's own instrumentation (redisotel), when installed.
const System = "streamq"

// streamq's attributes, named as the conventions name a system's own
// (messaging.<system>.message.*).
const (
	// StreamIDKey is the entry's Redis stream id (the Watermill UUID is messaging.message.id).
	StreamIDKey = attribute.Key("messaging.streamq.message.stream_id")
	// OriginalIDKey is the stream id of the message's first entry (a retry's or a replay's
	// differs from its own).
	OriginalIDKey = attribute.Key("messaging.streamq.message.original_id")
	// DeliveryCountKey counts the deliveries of the entry to the group, this one included.
	DeliveryCountKey = attribute.Key("messaging.streamq.message.delivery_count")
	// RetryCountKey is the retries of the message before this entry; on a retry span, the
	// number of the retry it writes; on a dead letter span, the retries it had.
	RetryCountKey = attribute.Key("messaging.streamq.message.retry_count")
	// ReplayedFromKey is the DLQ entry id a replayed message came from.
	ReplayedFromKey = attribute.Key("messaging.streamq.message.replayed_from")
	// OutcomeKey is how a delivery ended: ack, nack, deferred or stopped.
	OutcomeKey = attribute.Key("messaging.streamq.outcome")
	// ReasonKey is why a message was retried or dead-lettered; on a DLQ delivery, why the
	// letter was dead-lettered.
	ReasonKey = attribute.Key("messaging.streamq.reason")
	// RetryDueKey is when a parked retry is appended (Unix milliseconds); absent when it is
	// appended at once.
	RetryDueKey = attribute.Key("messaging.streamq.retry.due_unix_ms")
	// DeadLetterGroupKey is, on a DLQ delivery, the group that failed the message.
	DeadLetterGroupKey = attribute.Key("messaging.streamq.dead_letter.group")
)
