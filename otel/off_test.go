package streamqotel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// TestTracingOffRecordsNothing: without a Tracer, a publish, a nack, its retry and the dead
// letter record no span (even with a process-wide TracerProvider and propagator set and a
// recording span in the publisher's context), and no entry, retry or dead letter carries
// trace metadata.
func TestTracingOffRecordsNothing(t *testing.T) {
	r := newRecorder(t)
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(r.tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	onBackends(t, func(t *testing.T, client redis.UniversalClient) { testTracingOff(t, client, r) })
}

func testTracingOff(t *testing.T, client redis.UniversalClient, r recorder) {
	const topic, partitions = "quiet", 2
	r.rec.Reset()
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	msgs := subscribe(t, newSubscriber(t, fastSub(client, "g", nil)), topic)
	letters := subscribe(t, newSubscriber(t, fastSub(client, "dlq", nil)), streamq.DLQTopic(topic))

	ctx, request := r.root("request")
	msg := message.NewMessage(watermill.NewUUID(), []byte("x"))
	msg.SetContext(ctx)
	require.NoError(t, pub.Publish(topic, msg))
	request.End()
	assertNoTraceMetadata(t, msg.Metadata, "published message")
	for range 2 { // the delivery and its retry
		m := next(t, msgs)
		assertNoTraceMetadata(t, m.Metadata, "delivered message")
		m.Nack()
	}
	letter := next(t, letters)
	assertNoTraceMetadata(t, letter.Metadata, "dead letter")
	letter.Ack()

	space := keys.New("", "")
	for p := range partitions {
		for _, stream := range []string{space.PartitionStream(topic, p), space.DLQ(topic, p)} {
			entries, err := client.XRange(context.Background(), stream, "-", "+").Result()
			require.NoError(t, err)
			for _, e := range entries {
				for field, v := range e.Values {
					s, _ := v.(string)
					assert.NotContains(t, strings.ToLower(s), "traceparent", "%s %s field %s", stream, e.ID, field)
				}
			}
		}
	}
	assert.Len(t, r.rec.Ended(), 1, "only the test's own span")
}

func assertNoTraceMetadata(t *testing.T, md message.Metadata, what string) {
	t.Helper()
	for _, k := range []string{"traceparent", "tracestate", streamqotel.LinkTraceParentMetadata, streamqotel.LinkTraceStateMetadata} {
		assert.NotContains(t, md, k, "%s carries no %s", what, k)
	}
}
