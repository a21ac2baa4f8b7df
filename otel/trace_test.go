package streamqotel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// TestTraceFromPublishToReplay: publish -> nack -> retry -> nack -> dead letter -> replay
// from a DLQ handler -> ack, and the same letter replayed from admin -> ack, form one trace
// under the publisher's caller: every delivery is a child of the publish, the retry's
// delivery links to the retry span, the dead letter's delivery and both replays link to the
// dead letter span, the handler's msg.Context() carries its delivery span, and every span
// has the messaging attributes.
func TestTraceFromPublishToReplay(t *testing.T) {
	onBackends(t, testTraceFromPublishToReplay)
}

func testTraceFromPublishToReplay(t *testing.T, client redis.UniversalClient) {
	const topic, group, dlqGroup = "orders", "billing", "dlq-handler"
	r := newRecorder(t)
	tracer := r.tracer()
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4, Tracer: tracer})
	msgs := subscribe(t, newSubscriber(t, fastSub(client, group, tracer)), topic)
	letters := subscribe(t, newSubscriber(t, fastSub(client, dlqGroup, tracer)), streamq.DLQTopic(topic))
	var seen handlerSpans

	ctx, request := r.root("request")
	msg := message.NewMessage(watermill.NewUUID(), []byte("order-1"))
	msg.SetContext(ctx)
	require.NoError(t, pub.Publish(topic, msg))
	request.End()
	firstID, _ := streamq.PublishedStreamID(msg)

	for _, reason := range []string{"boom", "boom again"} { // the first delivery, then its retry
		m := next(t, msgs)
		seen.add(m)
		m.Metadata.Set(streamq.LastErrorMetadata, reason)
		m.Nack()
	}
	letter := next(t, letters)
	seen.add(letter)
	info, ok := streamq.DeadLetterFromCtx(letter.Context())
	require.True(t, ok)
	dlqID, _ := streamq.StreamIDFromCtx(letter.Context())
	streamq.Replay(letter)
	letter.Ack()
	replayed := next(t, msgs)
	seen.add(replayed)
	replayed.Ack()

	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	_, err = adm.ReplayDeadLetter(context.Background(), topic, info.OriginalPartition, dlqID, admin.ReplayOptions{Again: true}) // the handler replayed it first
	require.NoError(t, err)
	again := next(t, msgs)
	seen.add(again)
	again.Ack()

	// request, send, 4 deliveries of the topic, retry, dead_letter, 1 of the DLQ, replay.
	all := r.ended(t, 10)
	send := all.named("send " + topic)
	process := all.named("process " + topic)
	require.Len(t, send, 1)
	require.Len(t, process, 4)
	retry, dead := all.named("retry "+topic), all.named("dead_letter "+topic)
	dlqProcess, replay := all.named("process "+streamq.DLQTopic(topic)), all.named("replay "+streamq.DLQTopic(topic))
	require.Len(t, retry, 1)
	require.Len(t, dead, 1)
	require.Len(t, dlqProcess, 1)
	require.Len(t, replay, 1)

	for _, sp := range all {
		assert.Equal(t, request.SpanContext().TraceID(), sp.SpanContext().TraceID(), "%s is in the request's trace", sp.Name())
	}
	assert.Len(t, all, 10, "no other span: %v", names(all))

	// The publish: a producer span under the request, its context in the metadata.
	assert.Equal(t, request.SpanContext().SpanID(), send[0].Parent().SpanID())
	assert.Equal(t, trace.SpanKindProducer, send[0].SpanKind())
	sa := attrs(send[0])
	assert.Equal(t, "streamq", sa["messaging.system"].AsString())
	assert.Equal(t, topic, sa["messaging.destination.name"].AsString())
	assert.Equal(t, "send", sa["messaging.operation.type"].AsString())
	assert.Equal(t, msg.UUID, sa["messaging.message.id"].AsString())
	assert.Equal(t, fmt.Sprint(info.OriginalPartition), sa["messaging.destination.partition.id"].AsString())
	assert.Equal(t, firstID, sa[streamqotel.StreamIDKey].AsString())
	assert.Contains(t, msg.Metadata.Get("traceparent"), send[0].SpanContext().SpanID().String())

	// Every delivery of the topic is a child of the publish, with its attributes, and the
	// handler's context carries it.
	for i, sp := range process {
		assert.Equal(t, send[0].SpanContext().SpanID(), sp.Parent().SpanID(), "delivery %d is a child of the publish", i)
		assert.Equal(t, trace.SpanKindConsumer, sp.SpanKind())
		a := attrs(sp)
		assert.Equal(t, "streamq", a["messaging.system"].AsString())
		assert.Equal(t, topic, a["messaging.destination.name"].AsString())
		assert.Equal(t, fmt.Sprint(info.OriginalPartition), a["messaging.destination.partition.id"].AsString())
		assert.Equal(t, group, a["messaging.consumer.group.name"].AsString())
		assert.Equal(t, "process", a["messaging.operation.type"].AsString())
		assert.Equal(t, msg.UUID, a["messaging.message.id"].AsString())
		assert.Equal(t, int64(1), a[streamqotel.DeliveryCountKey].AsInt64())
		assert.Equal(t, firstID, a[streamqotel.OriginalIDKey].AsString())
		assert.NotEmpty(t, a[streamqotel.StreamIDKey].AsString())
	}
	seen.mu.Lock()
	handlerCtx := append([]trace.SpanContext(nil), seen.seen...)
	seen.mu.Unlock()
	delivered := spans{process[0], process[1], dlqProcess[0], process[2], process[3]} // in the order handled
	for i, sp := range delivered {
		assert.Equal(t, sp.SpanContext().SpanID(), handlerCtx[i].SpanID(), "msg.Context() of delivery %d carries its span", i)
	}

	// The first delivery: nacked, its retry written under it.
	first, second := process[0], process[1]
	assert.Equal(t, firstID, attrs(first)[streamqotel.StreamIDKey].AsString())
	assert.Equal(t, int64(0), attrs(first)[streamqotel.RetryCountKey].AsInt64())
	assert.Equal(t, "nack", attrs(first)[streamqotel.OutcomeKey].AsString())
	assert.Equal(t, codes.Error, first.Status().Code)
	assert.Equal(t, "boom", first.Status().Description)
	assert.Empty(t, first.Links())
	assert.Equal(t, first.SpanContext().SpanID(), retry[0].Parent().SpanID())
	ra := attrs(retry[0])
	assert.Equal(t, "settle", ra["messaging.operation.type"].AsString())
	assert.Equal(t, "retry", ra["messaging.operation.name"].AsString())
	assert.Equal(t, int64(1), ra[streamqotel.RetryCountKey].AsInt64())
	assert.Equal(t, "boom", ra[streamqotel.ReasonKey].AsString())
	assert.Equal(t, codes.Unset, retry[0].Status().Code)

	// The retry's delivery links to the retry; its nack writes the dead letter.
	assert.Equal(t, int64(1), attrs(second)[streamqotel.RetryCountKey].AsInt64())
	assert.NotEqual(t, firstID, attrs(second)[streamqotel.StreamIDKey].AsString())
	assert.True(t, linkedTo(second, retry[0].SpanContext()), "the retry's delivery links to the retry span")
	assert.Equal(t, second.SpanContext().SpanID(), dead[0].Parent().SpanID())
	da := attrs(dead[0])
	assert.Equal(t, "dead_letter", da["messaging.operation.name"].AsString())
	assert.Equal(t, int64(1), da[streamqotel.RetryCountKey].AsInt64())
	assert.Contains(t, da[streamqotel.ReasonKey].AsString(), "boom again")

	// The dead letter's delivery on the DLQ topic, and the replay its handler asked for.
	la := attrs(dlqProcess[0])
	assert.Equal(t, send[0].SpanContext().SpanID(), dlqProcess[0].Parent().SpanID())
	assert.True(t, linkedTo(dlqProcess[0], dead[0].SpanContext()), "the DLQ delivery links to the dead letter span")
	assert.Equal(t, dlqGroup, la["messaging.consumer.group.name"].AsString())
	assert.Equal(t, group, la[streamqotel.DeadLetterGroupKey].AsString())
	assert.Contains(t, la[streamqotel.ReasonKey].AsString(), "retries exhausted")
	assert.Equal(t, dlqID, la[streamqotel.StreamIDKey].AsString())
	assert.Equal(t, dlqProcess[0].SpanContext().SpanID(), replay[0].Parent().SpanID())
	assert.Equal(t, "replay", attrs(replay[0])["messaging.operation.name"].AsString())

	// Both replays (DLQ handler, then admin) link to the dead letter span and are acked.
	for i, sp := range process[2:] {
		a := attrs(sp)
		assert.True(t, linkedTo(sp, dead[0].SpanContext()), "replay %d links to the dead letter span", i)
		assert.Equal(t, dlqID, a[streamqotel.ReplayedFromKey].AsString())
		assert.Equal(t, "ack", a[streamqotel.OutcomeKey].AsString())
		assert.Equal(t, codes.Unset, sp.Status().Code)
	}
}

func names(s spans) []string {
	out := make([]string, len(s))
	for i, sp := range s {
		out[i] = sp.Name()
	}
	return out
}

var _ sdktrace.ReadOnlySpan // spans are sdktrace.ReadOnlySpan
