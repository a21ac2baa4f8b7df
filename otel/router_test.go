package streamqotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// handlerTrace is what Watermill's OpenTelemetry middlewares do (voi-oss/watermill-opentelemetry's
// Trace): a span per handler call started from msg.Context(), set back on the message.
func handlerTrace(tp trace.TracerProvider) message.HandlerMiddleware {
	tracer := tp.Tracer("watermill/subscriber")
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			ctx, span := tracer.Start(msg.Context(), message.HandlerNameFromCtx(msg.Context()), trace.WithSpanKind(trace.SpanKindConsumer))
			defer span.End()
			msg.SetContext(ctx)
			out, err := h(msg)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return out, err
		}
	}
}

// TestRouterHandlerSpanIsChildOfDelivery: through a Router with a handler tracing
// middleware, the handler's span is a child of streamq's delivery span, the context getters
// still answer under the middleware's context, and a message the handler produces with
// msg.Context() is published (by the Router) as a child of the handler's span, so
// request -> send in -> process in -> handler -> send out -> process out is one trace.
func TestRouterHandlerSpanIsChildOfDelivery(t *testing.T) {
	const in, out = "in", "out"
	client := redistest.Start(t).Client(t)
	r := newRecorder(t)
	tracer := r.tracer()
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Tracer: tracer})
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, watermill.NopLogger{})
	require.NoError(t, err)
	router.AddMiddleware(handlerTrace(r.tp))
	partitionSeen := make(chan bool, 1)
	router.AddHandler("enrich", in, newSubscriber(t, fastSub(client, "enricher", tracer)), out, pub,
		func(msg *message.Message) ([]*message.Message, error) {
			_, ok := streamq.PartitionFromCtx(msg.Context())
			partitionSeen <- ok
			produced := message.NewMessage(watermill.NewUUID(), msg.Payload)
			produced.SetContext(msg.Context()) // the Router publishes it: its span is the handler's child
			return []*message.Message{produced}, nil
		})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = router.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-router.Running()
	outs := subscribe(t, newSubscriber(t, fastSub(client, "downstream", tracer)), out)

	reqCtx, request := r.root("request")
	msg := message.NewMessage(watermill.NewUUID(), []byte("x"))
	msg.SetContext(reqCtx)
	require.NoError(t, pub.Publish(in, msg))
	request.End()
	next(t, outs).Ack()
	assert.True(t, <-partitionSeen, "PartitionFromCtx answers under the middleware's context")

	all := r.ended(t, 6)
	chain := []string{"request", "send in", "process in", "enrich", "send out", "process out"}
	var parent trace.SpanContext
	parentName := ""
	for _, name := range chain {
		got := all.named(name)
		require.Len(t, got, 1, name)
		assert.Equal(t, request.SpanContext().TraceID(), got[0].SpanContext().TraceID(), name)
		if parentName != "" {
			assert.Equal(t, parent.SpanID(), got[0].Parent().SpanID(), "%s is a child of %s", name, parentName)
		}
		parent, parentName = got[0].SpanContext(), name
	}
}
