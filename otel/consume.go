package streamqotel

import (
	"context"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
)

// StartDelivery implements streamq.Tracer: a "process T" consumer span, a child of the
// trace context in msg's metadata (its publish), with a link to the span that wrote a retry
// or a dead letter (LinkTraceParentMetadata). The returned context carries the span; the
// delivered message's context is built on it.
func (t *Tracer) StartDelivery(ctx context.Context, msg *message.Message, d streamq.DeliveryInfo) (context.Context, func(streamq.DeliveryOutcome)) {
	ctx = t.prop.Extract(ctx, propagation.MapCarrier(msg.Metadata))
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(deliveryAttributes(msg, d)...)}
	if link := linked(msg.Metadata); link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
	}
	ctx, span := t.tracer.Start(ctx, "process "+d.Topic, opts...)
	return ctx, func(out streamq.DeliveryOutcome) { endDelivery(span, msg, out) }
}

func deliveryAttributes(msg *message.Message, d streamq.DeliveryInfo) []attribute.KeyValue {
	attrs := append(common(d.Topic, d.Partition, d.ConsumerGroup, msg),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingOperationName("process"),
		semconv.MessagingClientID(d.Consumer),
		semconv.MessagingMessageBodySize(len(msg.Payload)),
		StreamIDKey.String(d.StreamID),
		OriginalIDKey.String(d.OriginalID),
		DeliveryCountKey.Int64(d.DeliveryCount),
		RetryCountKey.Int(d.RetryCount),
	)
	if from := msg.Metadata.Get(streamq.ReplayedFromMetadata); from != "" {
		attrs = append(attrs, ReplayedFromKey.String(from))
	}
	if l := d.DeadLetter; l != nil {
		attrs = append(attrs, ReasonKey.String(l.Reason), DeadLetterGroupKey.String(l.Group))
	}
	return attrs
}

// linked is the span context a retry or a dead letter carries as its link.
func linked(md message.Metadata) trace.SpanContext {
	if md.Get(LinkTraceParentMetadata) == "" {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(linkFormat.Extract(context.Background(), linkCarrier(md)))
}

// endDelivery records the outcome: a nack is an error, with the handler's recorded reason
// (streamq.LastErrorMetadata, see streamq.FailureMiddleware) when there is one.
func endDelivery(span trace.Span, msg *message.Message, out streamq.DeliveryOutcome) {
	span.SetAttributes(OutcomeKey.String(string(out)))
	if out == streamq.DeliveryNacked {
		reason := msg.Metadata.Get(streamq.LastErrorMetadata)
		if reason == "" {
			reason = "nacked"
		}
		span.SetStatus(codes.Error, reason)
	}
	span.End()
}

// StartSettle implements streamq.Tracer: a "<step> T" span, a child of the delivery's span
// (msg.Context()), or of the message's publish when the handler replaced the context. A
// retry and a dead letter carry its context as their link.
func (t *Tracer) StartSettle(msg *message.Message, s streamq.Settlement) func(bool) {
	ctx := msg.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = t.prop.Extract(ctx, propagation.MapCarrier(msg.Metadata))
	}
	attrs := append(common(s.Topic, s.Partition, s.ConsumerGroup, msg),
		semconv.MessagingOperationTypeSettle,
		semconv.MessagingOperationName(string(s.Step)),
		StreamIDKey.String(s.StreamID),
	)
	attrs = append(attrs, settleAttributes(s)...)
	ctx, span := t.tracer.Start(ctx, string(s.Step)+" "+s.Topic, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if s.Step == streamq.SettleRetry || s.Step == streamq.SettleDeadLetter {
		clearFields(msg.Metadata, linkPrefix, linkFormat)
		linkFormat.Inject(ctx, linkCarrier(msg.Metadata))
	}
	return func(ok bool) {
		if !ok {
			span.SetStatus(codes.Error, "not applied: the entry is delivered again")
		}
		span.End()
	}
}

func settleAttributes(s streamq.Settlement) []attribute.KeyValue {
	switch s.Step {
	case streamq.SettleRetry:
		attrs := []attribute.KeyValue{RetryCountKey.Int(s.Retry), ReasonKey.String(s.Reason)}
		if !s.Due.IsZero() {
			attrs = append(attrs, RetryDueKey.Int64(s.Due.UnixMilli()))
		}
		return attrs
	case streamq.SettleDeadLetter:
		return []attribute.KeyValue{RetryCountKey.Int(s.Retry), ReasonKey.String(s.Reason)}
	default:
		return nil
	}
}
