package streamqotel_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// onBackends runs test on a single redis-server and on a 3-master Redis Cluster, as the
// subtests "single" and "cluster", each with a Redis of its own.
func onBackends(t *testing.T, test func(t *testing.T, client redis.UniversalClient)) {
	t.Helper()
	t.Run("single", func(t *testing.T) { test(t, redistest.Start(t).Client(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, redistest.StartCluster(t, 3, 0).Client(t)) })
}

// recorder is an in-memory TracerProvider and what it recorded.
type recorder struct {
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

func newRecorder(t testing.TB) recorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return recorder{rec: rec, tp: tp}
}

func (r recorder) tracer() *streamqotel.Tracer {
	return streamqotel.New(streamqotel.Config{TracerProvider: r.tp})
}

// root starts the test's own span, the caller of a Publish.
func (r recorder) root(name string) (context.Context, trace.Span) {
	return r.tp.Tracer("test").Start(context.Background(), name)
}

// ended waits for n ended spans and returns them by start time.
func (r recorder) ended(t testing.TB, n int) spans {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.rec.Ended()) >= n }, 20*time.Second, 10*time.Millisecond,
		"want %d ended spans", n)
	got := spans(r.rec.Ended())
	sort.SliceStable(got, func(i, j int) bool { return got[i].StartTime().Before(got[j].StartTime()) })
	return got
}

type spans []sdktrace.ReadOnlySpan

// named returns the spans called name, by start time.
func (s spans) named(name string) spans {
	var out spans
	for _, sp := range s {
		if sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

func attrs(sp sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range sp.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// linkedTo reports whether sp has a link to the span of sc.
func linkedTo(sp sdktrace.ReadOnlySpan, sc trace.SpanContext) bool {
	for _, l := range sp.Links() {
		if l.SpanContext.SpanID() == sc.SpanID() && l.SpanContext.TraceID() == sc.TraceID() {
			return true
		}
	}
	return false
}

// fastSub is a subscriber config with short intervals.
func fastSub(client redis.UniversalClient, group string, tracer streamq.Tracer) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: group,
		Membership:    streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Reclaim:       streamq.ReclaimConfig{ScanInterval: time.Second, Idle: 3 * time.Second},
		Read:          streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:      streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:         streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}, MoverInterval: 100 * time.Millisecond}, // one retry, at once
		Tracer:        tracer,
	}
}

func newSubscriber(t testing.TB, cfg streamq.SubscriberConfig) *streamq.Subscriber {
	t.Helper()
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func newPublisher(t testing.TB, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	pub, err := streamq.NewPublisher(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

func subscribe(t testing.TB, sub *streamq.Subscriber, topic string) <-chan *message.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	return ch
}

func next(t testing.TB, ch <-chan *message.Message) *message.Message {
	t.Helper()
	select {
	case m, ok := <-ch:
		require.True(t, ok, "subscription closed")
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message within 20s")
		return nil
	}
}

// handlerSpans records the span context each delivered message's context carried.
type handlerSpans struct {
	mu   sync.Mutex
	seen []trace.SpanContext
}

func (h *handlerSpans) add(m *message.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, trace.SpanContextFromContext(m.Context()))
}
