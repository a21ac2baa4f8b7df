package streamq

import "context"

type ctxKey struct{}

// deliveryKey holds one *delivery per delivered message: one context value, not nine.
var deliveryKey ctxKey

// TopicFromCtx returns the topic of a delivered message.
func TopicFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.topic, ok
}

// PartitionFromCtx returns the partition a delivered message was read from.
func PartitionFromCtx(ctx context.Context) (int, bool) {
	d, ok := fromCtx(ctx)
	return d.partition, ok
}

// StreamIDFromCtx returns the Redis stream id of a delivered message.
func StreamIDFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.streamID, ok
}

// DeliveryCountFromCtx returns how many times this entry has been delivered to the group,
// this delivery included (1 on first delivery).
func DeliveryCountFromCtx(ctx context.Context) (int64, bool) {
	d, ok := fromCtx(ctx)
	return d.count, ok
}

// ConsumerGroupFromCtx returns the consumer group a message was delivered to.
func ConsumerGroupFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.group, ok
}

// ConsumerFromCtx returns the consumer (member) name that received a message.
func ConsumerFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.consumer, ok
}

// RetryCountFromCtx returns how many times a delivered message has been retried (0 on its
// first delivery).
func RetryCountFromCtx(ctx context.Context) (int, bool) {
	d, ok := fromCtx(ctx)
	return d.retries, ok
}

// OriginalIDFromCtx returns the stream id of the message's first entry: its own id unless it
// is a retry or a replay. On a DLQTopic it is the dead letter's original message id (the id
// in its partition, never the DLQ entry's), retried or not.
func OriginalIDFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.originalID, ok
}

// LastErrorFromCtx returns the reason of the message's last failure, when it was retried.
func LastErrorFromCtx(ctx context.Context) (string, bool) {
	d, ok := fromCtx(ctx)
	return d.lastError, ok && d.lastError != ""
}

// DeadLetterFromCtx returns the record of a dead letter delivered on a DLQTopic
// subscription: why and when it failed, in which group, where it came from. false on a topic
// that is not a DLQ.
func DeadLetterFromCtx(ctx context.Context) (DeadLetterInfo, bool) {
	d, _ := fromCtx(ctx)
	if d.letter == nil {
		return DeadLetterInfo{}, false
	}
	return *d.letter, true
}

func fromCtx(ctx context.Context) (*delivery, bool) {
	if d, ok := ctx.Value(deliveryKey).(*delivery); ok {
		return d, true
	}
	return &delivery{}, false
}

type delivery struct {
	topic, streamID, group, consumer string
	originalID, lastError            string
	partition, retries               int
	count                            int64
	letter                           *DeadLetterInfo // on a DLQ view only
}
