package streamqotel_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamq-dev/streamq"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// BenchmarkHooks is the CPU and memory the hooks add to one message when tracing is on
// (every span sampled and recorded, none exported; or none sampled): its send span with the
// trace context written into the metadata, and one delivery span with it read back. "none"
// makes the message alone, to subtract.
func BenchmarkHooks(b *testing.B) {
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = message.NewMessage(watermill.NewUUID(), []byte("payload"))
		}
	})
	for _, bc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{{"sampled", sdktrace.AlwaysSample()}, {"not-sampled", sdktrace.NeverSample()}} {
		b.Run(bc.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(bc.sampler))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			tracer := streamqotel.New(streamqotel.Config{TracerProvider: tp})
			info := streamq.DeliveryInfo{Topic: "orders", Partition: 3, StreamID: "1-0", OriginalID: "1-0",
				ConsumerGroup: "billing", Consumer: "streamq-a", DeliveryCount: 1}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				msg := message.NewMessage(watermill.NewUUID(), []byte("payload"))
				tracer.StartPublish("orders", msg)(nil)
				_, end := tracer.StartDelivery(ctx, msg, info)
				end(streamq.DeliveryAcked)
			}
		})
	}
}
