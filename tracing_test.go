package streamq_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// fakeTracer records the hooks it is given, writes a mark into the metadata as a real
// Tracer writes its trace context, and puts a value into each delivery's context.
type fakeTracer struct {
	mu         sync.Mutex
	published  []string // topic of each StartPublish
	pubErrs    []error
	deliveries []streamq.DeliveryInfo
	outcomes   []streamq.DeliveryOutcome
	settles    []streamq.Settlement
	settleOK   []bool
}

type fakeSpanKey struct{}

func (f *fakeTracer) StartPublish(topic string, msg *message.Message) func(error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, topic)
	msg.Metadata.Set("fake-trace", "publish")
	return func(err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.pubErrs = append(f.pubErrs, err)
	}
}

func (f *fakeTracer) StartDelivery(ctx context.Context, _ *message.Message, d streamq.DeliveryInfo) (context.Context, func(streamq.DeliveryOutcome)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliveries = append(f.deliveries, d)
	return context.WithValue(ctx, fakeSpanKey{}, len(f.deliveries)), func(out streamq.DeliveryOutcome) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.outcomes = append(f.outcomes, out)
	}
}

func (f *fakeTracer) StartSettle(msg *message.Message, s streamq.Settlement) func(bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settles = append(f.settles, s)
	msg.Metadata.Set("fake-link", s.StreamID) // stored with the retry
	return func(ok bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.settleOK = append(f.settleOK, ok)
	}
}

// TestTracerHooks: with a Tracer, Publish starts one span per message and ends it with its
// result, each delivery gets a span whose context is the parent of msg.Context() and that
// ends with the handler's answer, a retry gets a settle span whose metadata is stored with
// the retry, and the hooks see what the context getters see.
func TestTracerHooks(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	tr := &fakeTracer{}
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Tracer: tr})
	cfg := streamqtest.FastSub(client, "g")
	cfg.Tracer = tr
	msgs, err := streamqtest.NewSubscriber(t, cfg).Subscribe(context.Background(), "traced")
	require.NoError(t, err)

	msg := message.NewMessage(watermill.NewUUID(), []byte("x"))
	require.NoError(t, pub.Publish("traced", msg))
	first := nextMsg(t, msgs, 10*time.Second)
	assert.Equal(t, 1, first.Context().Value(fakeSpanKey{}), "msg.Context() is built on the delivery span's context")
	assert.Equal(t, "publish", first.Metadata.Get("fake-trace"), "the publish hook's metadata is stored")
	firstID, _ := streamq.StreamIDFromCtx(first.Context())
	first.Metadata.Set(streamq.LastErrorMetadata, "boom")
	first.Nack()
	retry := nextMsg(t, msgs, 10*time.Second)
	assert.Equal(t, 2, retry.Context().Value(fakeSpanKey{}))
	assert.Equal(t, firstID, retry.Metadata.Get("fake-link"), "the settle hook's metadata is stored with the retry")
	retryID, _ := streamq.StreamIDFromCtx(retry.Context())
	retry.Ack()

	require.Eventually(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.outcomes) == 2 && len(tr.settleOK) == 1
	}, 10*time.Second, 10*time.Millisecond)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	assert.Equal(t, []string{"traced"}, tr.published)
	assert.Equal(t, []error{nil}, tr.pubErrs)
	part, _ := streamq.PublishedPartition(msg)
	assert.Equal(t, []streamq.DeliveryInfo{
		{Topic: "traced", Partition: part, StreamID: firstID, OriginalID: firstID, ConsumerGroup: "g", Consumer: tr.deliveries[0].Consumer, DeliveryCount: 1},
		{Topic: "traced", Partition: part, StreamID: retryID, OriginalID: firstID, ConsumerGroup: "g", Consumer: tr.deliveries[0].Consumer, DeliveryCount: 1, RetryCount: 1},
	}, tr.deliveries)
	assert.NotEmpty(t, tr.deliveries[0].Consumer)
	assert.Equal(t, []streamq.DeliveryOutcome{streamq.DeliveryNacked, streamq.DeliveryAcked}, tr.outcomes)
	assert.Equal(t, []streamq.Settlement{{Step: streamq.SettleRetry, Topic: "traced", Partition: part, ConsumerGroup: "g", StreamID: firstID, Reason: "boom", Retry: 1}}, tr.settles)
	assert.Equal(t, []bool{true}, tr.settleOK)
}
