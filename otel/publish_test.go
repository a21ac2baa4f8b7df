package streamqotel_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// TestPublishSpanParents: a Publish of several messages starts one send span per message;
// a message whose context has no span but whose metadata carries a trace context (forwarded
// as received) stays in that trace; one whose context's trace differs from its metadata's
// is a child of the context with a link to the other, and loses the other's tracestate; a
// stale link is removed.
func TestPublishSpanParents(t *testing.T) {
	client := redistest.Start(t).Client(t)
	r := newRecorder(t)
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 3, Tracer: r.tracer()})
	w3c := propagation.TraceContext{}

	upCtx, upstream := r.root("upstream") // a trace the messages' metadata carries
	upstream.End()
	reqCtx, request := r.root("request")
	forwarded := message.NewMessage(watermill.NewUUID(), []byte("forwarded"))
	w3c.Inject(upCtx, propagation.MapCarrier(forwarded.Metadata))
	forwarded.Metadata.Set("tracestate", "vendor=1")
	forwarded.Metadata.Set(streamqotel.LinkTraceParentMetadata, forwarded.Metadata.Get("traceparent"))
	both := message.NewMessage(watermill.NewUUID(), []byte("both"))
	w3c.Inject(upCtx, propagation.MapCarrier(both.Metadata))
	both.Metadata.Set("tracestate", "stale=1")
	both.SetContext(reqCtx)
	plain := message.NewMessage(watermill.NewUUID(), []byte("plain"))
	plain.SetContext(reqCtx)
	require.NoError(t, pub.Publish("fwd", forwarded, both, plain))
	request.End()

	send := r.ended(t, 5).named("send fwd")
	require.Len(t, send, 3)
	byID := map[string]trace.SpanContext{}
	for _, sp := range send {
		byID[attrs(sp)["messaging.message.id"].AsString()] = sp.SpanContext()
		switch attrs(sp)["messaging.message.id"].AsString() {
		case forwarded.UUID:
			assert.Equal(t, upstream.SpanContext().SpanID(), sp.Parent().SpanID(), "forwarded: a child of its metadata's context")
			assert.Empty(t, sp.Links())
		case both.UUID:
			assert.Equal(t, request.SpanContext().SpanID(), sp.Parent().SpanID(), "both: a child of its context")
			assert.True(t, linkedTo(sp, upstream.SpanContext()), "both: links to its metadata's context")
		case plain.UUID:
			assert.Equal(t, request.SpanContext().SpanID(), sp.Parent().SpanID())
			assert.Empty(t, sp.Links())
		}
	}
	for _, m := range []*message.Message{forwarded, both, plain} {
		got := trace.SpanContextFromContext(w3c.Extract(context.Background(), propagation.MapCarrier(m.Metadata)))
		assert.Equal(t, byID[m.UUID].SpanID(), got.SpanID(), "%s carries its send span", m.Payload)
	}
	assert.Equal(t, "vendor=1", forwarded.Metadata.Get("tracestate"), "the parent's tracestate goes on")
	assert.NotContains(t, both.Metadata, "tracestate", "no stale tracestate of the linked context")
	assert.NotContains(t, forwarded.Metadata, streamqotel.LinkTraceParentMetadata, "no stale link")
}

// TestPublishSpanRecordsTheError: a Publish that fails ends each message's span with the
// error; a Publish after Close too.
func TestPublishSpanRecordsTheError(t *testing.T) {
	client := redistest.Start(t).Client(t)
	r := newRecorder(t)
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Tracer: r.tracer()})
	bad := message.NewMessage(watermill.NewUUID(), []byte("x"))
	bad.Metadata.Set(streamq.ForcePartitionMetadata, "7")
	err := pub.Publish("errs", bad)
	require.ErrorIs(t, err, streamq.ErrPartitionOutOfRange)
	require.NoError(t, pub.Close())
	closed := message.NewMessage(watermill.NewUUID(), []byte("y"))
	require.ErrorIs(t, pub.Publish("errs", closed), streamq.ErrPublisherClosed)

	send := r.ended(t, 2).named("send errs")
	require.Len(t, send, 2)
	for _, sp := range send {
		assert.Equal(t, codes.Error, sp.Status().Code, sp.Name())
		assert.NotContains(t, attrs(sp), "messaging.destination.partition.id", "not written anywhere")
		require.NotEmpty(t, sp.Events(), "the error is recorded")
		assert.Equal(t, "exception", sp.Events()[0].Name)
	}
	assert.Contains(t, send[0].Status().Description, "out of range")
}
