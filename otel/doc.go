// Package streamqotel traces streamq with OpenTelemetry: a producer span for each published
// message, a consumer span for each delivery, and a span for each retry, dead letter,
// replay and drop, with the W3C trace context (traceparent, tracestate) carried in the
// message's metadata. Import it as
//
//	import streamqotel "github.com/streamq-dev/streamq/otel"
//
// and set one Tracer on both configs:
//
//	tracer := streamqotel.New(streamqotel.Config{TracerProvider: tp})
//	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: rdb, Tracer: tracer}, logger)
//	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: rdb, ConsumerGroup: "billing", Tracer: tracer}, logger)
//
// What a trace holds:
//
//   - "send T" (producer): one per message of a Publish, a child of msg.Context()'s span
//     (or, when that has none, of the trace context already in the message's metadata);
//     its context is written into the metadata as traceparent and tracestate.
//   - "process T" (consumer): one per delivery, a child of the trace context in the
//     message's metadata, and the parent of msg.Context(): spans the handler (or a Router
//     middleware) starts from msg.Context() are its children. Retries, dead letters and
//     replays keep the metadata, so every delivery of a message is in the trace of its
//     publish.
//   - "retry T", "dead_letter T", "replay T", "drop T": the step that settled a nacked
//     message or a dead letter, a child of the delivery's span. A retry and a dead letter
//     store that span's context in the metadata too (LinkTraceParentMetadata), so the
//     delivery of the retry, of the dead letter on a DLQ topic, and of its replay (from a
//     DLQ handler or from admin) each have a link to it.
//
// The attributes follow OpenTelemetry's messaging semantic conventions with
// messaging.system "streamq" (see System), and streamq's own under messaging.streamq.* (see
// the attribute keys).
//
// This is a module of its own, so streamq's go.mod needs no OpenTelemetry: streamq calls
// the streamq.Tracer interface, which this package implements.
package streamqotel
