package streamq

import (
	"context"

	"github.com/streamq-dev/streamq/internal/consume"
)

// TopicFromCtx returns the topic of a delivered message.
func TopicFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.Topic, ok
}

// PartitionFromCtx returns the partition a delivered message was read from.
func PartitionFromCtx(ctx context.Context) (int, bool) {
	d, ok := fromCtx(ctx)
	return d.Partition, ok
}

// StreamIDFromCtx returns the Redis stream id of a delivered message.
func StreamIDFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.StreamID, ok
}

// DeliveryCountFromCtx returns how many times this entry has been delivered to the group,
// this delivery included (1 on first delivery).
func DeliveryCountFromCtx(ctx context.Context) (int64, bool) {
	d, ok := fromCtx(ctx)
	return d.Count, ok
}

// ConsumerGroupFromCtx returns the consumer group a message was delivered to.
func ConsumerGroupFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.Group, ok
}

// ConsumerFromCtx returns the consumer (member) name that received a message.
func ConsumerFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.Consumer, ok
}

// RetryCountFromCtx returns how many times a delivered message has been retried (0 on its
// first delivery).
func RetryCountFromCtx(ctx context.Context) (int, bool) {
	d, ok := fromCtx(ctx)
	return d.Retries, ok
}

// OriginalIDFromCtx returns the stream id of the message's first entry: its own id unless it
// is a retry or a replay. On a DLQTopic it is the dead letter's original message id (the id
// in its partition, never the DLQ entry's), retried or not.
func OriginalIDFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.OriginalID, ok
}

// LastErrorFromCtx returns the reason of the message's last failure, when it was retried.
func LastErrorFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.LastError, ok && d.LastError != ""
}

// DeadLetterFromCtx returns the record of a dead letter delivered on a DLQTopic
// subscription: why and when it failed, in which group, where it came from. false on a topic
// that is not a DLQ.
func DeadLetterFromCtx(ctx context.Context) (DeadLetterInfo, bool) {
	d, _ := fromCtx(ctx)
	if d.Letter == nil {
		return DeadLetterInfo{}, false
	}
	return letterOf(d), true
}

// fromCtx is the delivery of a message a Subscriber delivered with context ctx; a zero one
// and false for any other context.
func fromCtx(ctx context.Context) (*consume.Delivery, bool) {
	if d, ok := consume.DeliveryOf(ctx); ok {
		return d, true
	}
	return &consume.Delivery{}, false
}
