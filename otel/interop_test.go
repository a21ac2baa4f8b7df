package streamqotel_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestTraceAcrossRedisstreamEntries: the trace context is plain W3C metadata in
// watermill-redisstream's entry format, both ways: a watermill-redisstream subscriber
// reading a partition's stream finds streamq's send span in traceparent, and streamq
// delivers an entry a watermill-redisstream publisher wrote with a traceparent as a child
// of that span.
func TestTraceAcrossRedisstreamEntries(t *testing.T) {
	client := redistest.Start(t).Client(t)
	r := newRecorder(t)
	tracer := r.tracer()
	w3c := propagation.TraceContext{}
	space := keys.New("", "")
	ctx := context.Background()

	// streamq -> watermill-redisstream.
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Tracer: tracer})
	msg := message.NewMessage(watermill.NewUUID(), []byte("to redisstream"))
	require.NoError(t, pub.Publish("ours", msg))
	theirSub, err := redisstream.NewSubscriber(redisstream.SubscriberConfig{Client: client, ConsumerGroup: "theirs"}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = theirSub.Close() })
	subCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	theirs, err := theirSub.Subscribe(subCtx, space.PartitionStream("ours", 0))
	require.NoError(t, err)
	got := next(t, theirs)
	got.Ack()
	send := r.ended(t, 1).named("send ours")
	require.Len(t, send, 1)
	carried := trace.SpanContextFromContext(w3c.Extract(ctx, propagation.MapCarrier(got.Metadata)))
	assert.Equal(t, send[0].SpanContext().SpanID(), carried.SpanID(), "watermill-redisstream reads streamq's send span")

	// watermill-redisstream -> streamq.
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, "mixed", 1))
	msgs := subscribe(t, newSubscriber(t, fastSub(client, "g", tracer)), "mixed")
	theirPub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	upCtx, upstream := r.root("upstream")
	in := message.NewMessage(watermill.NewUUID(), []byte("from redisstream"))
	w3c.Inject(upCtx, propagation.MapCarrier(in.Metadata)) // what a Watermill tracing decorator writes
	require.NoError(t, theirPub.Publish(space.PartitionStream("mixed", 0), in))
	upstream.End()
	next(t, msgs).Ack()
	process := r.ended(t, 3).named("process mixed") // send ours, upstream, process mixed
	require.Len(t, process, 1)
	assert.Equal(t, upstream.SpanContext().SpanID(), process[0].Parent().SpanID())
	assert.Equal(t, upstream.SpanContext().TraceID(), process[0].SpanContext().TraceID())
}
