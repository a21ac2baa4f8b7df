package streamqotel_test

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// TestDeliveryOutcomes: a delivery acked after DeferAck ends as "deferred" (its later Nack
// writes a retry span under it); one still with its handler when the Subscriber closes ends
// as "stopped", and its next delivery counts 2.
func TestDeliveryOutcomes(t *testing.T) {
	client := redistest.Start(t).Client(t)
	r := newRecorder(t)
	tracer := r.tracer()
	pub := newPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Tracer: tracer})
	cfg := fastSub(client, "g", tracer)
	sub := newSubscriber(t, cfg)
	msgs := subscribe(t, sub, "outcomes")

	require.NoError(t, pub.Publish("outcomes", message.NewMessage(watermill.NewUUID(), []byte("deferred"))))
	m := next(t, msgs)
	handle, err := streamq.DeferAck(m)
	require.NoError(t, err)
	m.Ack()
	require.NoError(t, handle.Nack())
	next(t, msgs).Ack() // its retry

	require.NoError(t, pub.Publish("outcomes", message.NewMessage(watermill.NewUUID(), []byte("stopped"))))
	held := next(t, msgs)
	require.NoError(t, sub.Close())
	assert.Eventually(t, func() bool { return held.Context().Err() != nil }, 10*time.Second, 10*time.Millisecond)
	again := next(t, subscribe(t, newSubscriber(t, cfg), "outcomes"))
	again.Ack()

	// send, process (deferred), retry, process (ack); send, process (stopped), process (ack).
	all := r.ended(t, 7)
	process := all.named("process outcomes")
	require.Len(t, process, 4)
	outcomes := make([]string, len(process))
	for i, sp := range process {
		outcomes[i] = attrs(sp)[streamqotel.OutcomeKey].AsString()
	}
	assert.Equal(t, []string{"deferred", "ack", "stopped", "ack"}, outcomes)
	retry := all.named("retry outcomes")
	require.Len(t, retry, 1)
	assert.Equal(t, process[0].SpanContext().SpanID(), retry[0].Parent().SpanID(), "the deferred Nack's retry is under its delivery")
	assert.True(t, linkedTo(process[1], retry[0].SpanContext()))
	assert.Equal(t, codes.Unset, process[2].Status().Code, "a stop is no error")
	assert.Equal(t, int64(2), attrs(process[3])[streamqotel.DeliveryCountKey].AsInt64())
}
