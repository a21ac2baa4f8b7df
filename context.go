package streamq

import "context"

type ctxKey int

const (
	topicKey ctxKey = iota
	partitionKey
	streamIDKey
	deliveryCountKey
	groupKey
	consumerKey
	retryCountKey
	originalIDKey
	lastErrorKey
)

// TopicFromCtx returns the topic of a delivered message.
func TopicFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, topicKey) }

// PartitionFromCtx returns the partition a delivered message was read from.
func PartitionFromCtx(ctx context.Context) (int, bool) { return get[int](ctx, partitionKey) }

// StreamIDFromCtx returns the Redis stream id of a delivered message.
func StreamIDFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, streamIDKey) }

// DeliveryCountFromCtx returns how many times this entry has been delivered to the group,
// this delivery included (1 on first delivery).
func DeliveryCountFromCtx(ctx context.Context) (int64, bool) {
	return get[int64](ctx, deliveryCountKey)
}

// ConsumerGroupFromCtx returns the consumer group a message was delivered to.
func ConsumerGroupFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, groupKey) }

// ConsumerFromCtx returns the consumer (member) name that received a message.
func ConsumerFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, consumerKey) }

// RetryCountFromCtx returns how many times a delivered message has been retried (0 on its
// first delivery).
func RetryCountFromCtx(ctx context.Context) (int, bool) { return get[int](ctx, retryCountKey) }

// OriginalIDFromCtx returns the stream id of the message's first entry: its own id unless it
// is a retry or a replay.
func OriginalIDFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, originalIDKey) }

// LastErrorFromCtx returns the reason of the message's last failure, when it was retried.
func LastErrorFromCtx(ctx context.Context) (string, bool) { return get[string](ctx, lastErrorKey) }

func get[T any](ctx context.Context, k ctxKey) (T, bool) {
	v, ok := ctx.Value(k).(T)
	return v, ok
}

type delivery struct {
	topic, streamID, group, consumer string
	originalID, lastError            string
	partition, retries               int
	count                            int64
}

func (d delivery) context(parent context.Context) context.Context {
	ctx := context.WithValue(parent, topicKey, d.topic)
	ctx = context.WithValue(ctx, partitionKey, d.partition)
	ctx = context.WithValue(ctx, streamIDKey, d.streamID)
	ctx = context.WithValue(ctx, deliveryCountKey, d.count)
	ctx = context.WithValue(ctx, groupKey, d.group)
	ctx = context.WithValue(ctx, retryCountKey, d.retries)
	ctx = context.WithValue(ctx, originalIDKey, d.originalID)
	if d.lastError != "" {
		ctx = context.WithValue(ctx, lastErrorKey, d.lastError)
	}
	return context.WithValue(ctx, consumerKey, d.consumer)
}
