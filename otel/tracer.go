package streamqotel

import (
	"context"
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
)

// ScopeName is the instrumentation scope of streamq's spans.
const ScopeName = "github.com/streamq-dev/streamq/otel"

// Config configures a Tracer.
type Config struct {
	// TracerProvider creates the spans. Optional; default otel.GetTracerProvider() at New.
	TracerProvider trace.TracerProvider
	// Propagator writes a message's trace context into its metadata on publish and reads it
	// on delivery. Optional; default propagation.TraceContext{} (W3C traceparent and
	// tracestate, what watermill-kafka and most Watermill OpenTelemetry middlewares read);
	// pass otel.GetTextMapPropagator() to use the process-wide one (baggage, B3, ...).
	Propagator propagation.TextMapPropagator
}

// Tracer is a streamq.Tracer that records OpenTelemetry spans. It is safe for concurrent
// use; one Tracer serves any number of Publishers and Subscribers.
type Tracer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

var _ streamq.Tracer = (*Tracer)(nil)

// New returns a Tracer; set it as PublisherConfig.Tracer and SubscriberConfig.Tracer.
func New(cfg Config) *Tracer {
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	if cfg.Propagator == nil {
		cfg.Propagator = propagation.TraceContext{}
	}
	return &Tracer{tracer: cfg.TracerProvider.Tracer(ScopeName), prop: cfg.Propagator}
}

// StartPublish implements streamq.Tracer: a "send T" producer span, a child of
// msg.Context()'s span or, when it has none, of the trace context in msg's metadata (a
// message forwarded as it was received stays in its trace). A metadata context from another
// trace than msg.Context()'s becomes a link. The span's context replaces the metadata's.
func (t *Tracer) StartPublish(topic string, msg *message.Message) func(error) {
	if msg.Metadata == nil {
		msg.Metadata = message.Metadata{}
	}
	ctx := msg.Context()
	var opts []trace.SpanStartOption
	if carried := trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.MapCarrier(msg.Metadata))); carried.IsValid() {
		parent := trace.SpanContextFromContext(ctx)
		switch {
		case !parent.IsValid():
			ctx = trace.ContextWithRemoteSpanContext(ctx, carried)
		case parent.TraceID() != carried.TraceID():
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: carried}))
		}
	}
	opts = append(opts, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("send"),
		semconv.MessagingDestinationName(topic),
		semconv.MessagingMessageID(msg.UUID),
		semconv.MessagingMessageBodySize(len(msg.Payload)),
	))
	ctx, span := t.tracer.Start(ctx, "send "+topic, opts...)
	clearFields(msg.Metadata, "", t.prop)
	clearFields(msg.Metadata, linkPrefix, linkFormat) // a delivered message sent on links to nothing
	t.prop.Inject(ctx, propagation.MapCarrier(msg.Metadata))
	return func(err error) { endPublish(span, msg, err) }
}

// endPublish records where msg went, or why it did not.
func endPublish(span trace.Span, msg *message.Message, err error) {
	if p, ok := streamq.PublishedPartition(msg); ok {
		span.SetAttributes(semconv.MessagingDestinationPartitionID(strconv.Itoa(p)))
	}
	if id, ok := streamq.PublishedStreamID(msg); ok {
		span.SetAttributes(StreamIDKey.String(id))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// common are the attributes of every consumer-side span.
func common(topic string, partition int, group string, msg *message.Message) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingDestinationName(topic),
		semconv.MessagingDestinationPartitionID(strconv.Itoa(partition)),
		semconv.MessagingConsumerGroupName(group),
		semconv.MessagingMessageID(msg.UUID),
	}
}
