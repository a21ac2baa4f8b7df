package streamq

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// Tracer receives streamq's tracing hooks: a span per published message, a span per
// delivery and a span per retry, dead letter, replay or drop. Set the same Tracer on
// PublisherConfig.Tracer and SubscriberConfig.Tracer; the module
// github.com/streamq-dev/streamq/otel implements it for OpenTelemetry (streamqotel.New),
// so this package needs no tracing library. nil (the default) turns tracing off: streamq
// then calls no hook, allocates nothing for it and writes no trace metadata.
//
// The hooks are called from the goroutines that publish and deliver, concurrently; an
// implementation must be safe for concurrent use and must not block. Each function a hook
// returns is called exactly once.
type Tracer interface {
	// StartPublish starts the span of publishing msg to topic. It is called in Publish for
	// each message before msg is written, so metadata it sets (the trace context) is stored
	// with the message; msg.Context() is the caller's. end is called once Publish is done,
	// with nil when Redis took msg (PublishedPartition and PublishedStreamID then say where)
	// and Publish's error otherwise, or when too few replicas confirmed it
	// (ErrNotReplicated).
	StartPublish(topic string, msg *message.Message) (end func(err error))
	// StartDelivery starts the span of one delivery of msg, before it is handed to the
	// handler. ctx is the subscription's context; the returned context, derived from it,
	// becomes the parent of the delivered message's context (msg.Context()), so what the
	// handler starts from msg.Context() is a child of the delivery span. end is called when
	// the handler acked or nacked msg, or the delivery stopped.
	StartDelivery(ctx context.Context, msg *message.Message, d DeliveryInfo) (context.Context, func(DeliveryOutcome))
	// StartSettle starts the span of a retry, dead letter, replay or drop of a delivered msg,
	// before the step (one script) is sent; metadata it sets on msg is stored in the retry's
	// entry, the dead letter or the replay. end is called after the step, with false when it
	// did not take effect (the entry is delivered again).
	StartSettle(msg *message.Message, s Settlement) (end func(ok bool))
}

// DeliveryInfo is what a Tracer learns of one delivery: the values the context getters
// (PartitionFromCtx, DeliveryCountFromCtx, ...) return to the handler.
type DeliveryInfo struct {
	// Topic is the subscribed topic: a DLQTopic's name on a DLQ subscription.
	Topic     string
	Partition int
	// StreamID is the entry's id; OriginalID the id of the message's first entry.
	StreamID   string
	OriginalID string
	// ConsumerGroup and Consumer are the group and the member that delivers it.
	ConsumerGroup string
	Consumer      string
	// DeliveryCount counts the deliveries of this entry to the group, this one included;
	// RetryCount the retries of the message before this entry (0 on its first entry).
	DeliveryCount int64
	RetryCount    int
	// DeadLetter is the dead letter's record on a DLQ subscription, else nil.
	DeadLetter *DeadLetterInfo
}

// DeliveryOutcome is how a delivery ended, as a Tracer's delivery span reports it.
type DeliveryOutcome string

// The outcomes of a delivery.
const (
	// DeliveryAcked: the handler acked the message.
	DeliveryAcked DeliveryOutcome = "ack"
	// DeliveryNacked: the handler nacked it (a retry, a dead letter or a redelivery follows).
	DeliveryNacked DeliveryOutcome = "nack"
	// DeliveryDeferred: the handler acked it after DeferAck; its entry is settled later.
	DeliveryDeferred DeliveryOutcome = "deferred"
	// DeliveryStopped: the partition stopped (Close, a rebalance, a lost lease) before the
	// handler settled it; the entry is delivered again, maybe by another member.
	DeliveryStopped DeliveryOutcome = "stopped"
)

// SettleStep is the kind of settling step a Tracer's settle span covers.
type SettleStep string

// The settling steps that get a span (an ack is batched and gets none).
const (
	// SettleRetry writes the retry of a nacked message and acks the original.
	SettleRetry SettleStep = "retry"
	// SettleDeadLetter writes a nacked message to its partition's DLQ and acks it.
	SettleDeadLetter SettleStep = "dead_letter"
	// SettleReplay appends a dead letter acked with Replay back to its partition.
	SettleReplay SettleStep = "replay"
	// SettleDrop deletes a dead letter marked with Drop from its DLQ.
	SettleDrop SettleStep = "drop"
)

// Settlement describes one settling step to a Tracer.
type Settlement struct {
	Step          SettleStep
	Topic         string // the subscribed topic (a DLQTopic's name for a replay or a drop)
	Partition     int
	ConsumerGroup string
	StreamID      string // the settled entry
	// Reason is why the message is retried or dead-lettered.
	Reason string
	// Retry is the number of the retry written (SettleRetry), or the retries before the
	// dead letter (SettleDeadLetter).
	Retry int
	// Due is when a parked retry is appended to the partition; zero when it is appended at
	// once.
	Due time.Time
}
