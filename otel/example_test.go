package streamqotel_test

import (
	"context"
	"log"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamq-dev/streamq"
	streamqotel "github.com/streamq-dev/streamq/otel"
)

// Tracing a Publisher and a Subscriber: one Tracer on both configs. The publish's span is a
// child of the message's context; msg.Context() of a delivered message carries its
// delivery's span, a child of that publish.
func ExampleNew() {
	ctx := context.Background()
	// Your exporter goes here: sdktrace.WithBatcher(otlptracegrpc.New(...)).
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(ctx) }()
	otel.SetTracerProvider(tp)

	tracer := streamqotel.New(streamqotel.Config{TracerProvider: tp})
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	logger := watermill.NewStdLogger(false, false)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, Tracer: tracer}, logger)
	if err != nil {
		log.Fatal(err)
	}
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "billing", Tracer: tracer}, logger)
	if err != nil {
		log.Fatal(err)
	}

	reqCtx, span := tp.Tracer("checkout").Start(ctx, "checkout")
	msg := message.NewMessage(watermill.NewUUID(), []byte(`{"order":42}`))
	msg.SetContext(reqCtx) // the publish's span is a child of the request's
	if err := pub.Publish("orders", msg); err != nil {
		log.Fatal(err)
	}
	span.End()

	msgs, err := sub.Subscribe(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	delivered := <-msgs
	// A child of the delivery span, which is a child of "send orders".
	_, work := tp.Tracer("billing").Start(delivered.Context(), "charge")
	work.End()
	delivered.Ack()
}

// With a Router: a handler tracing middleware (Watermill's OpenTelemetry middlewares, or
// this one) starts its span from msg.Context(), so it is a child of streamq's delivery
// span; a produced message given msg.Context() is published as a child of the handler's.
func ExampleNew_router() {
	tp := otel.GetTracerProvider()
	tracer := streamqotel.New(streamqotel.Config{TracerProvider: tp})
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	logger := watermill.NewStdLogger(false, false)
	pub, _ := streamq.NewPublisher(streamq.PublisherConfig{Client: client, Tracer: tracer}, logger)
	sub, _ := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "shipping", Tracer: tracer}, logger)

	router, _ := message.NewRouter(message.RouterConfig{}, logger)
	router.AddMiddleware(func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			ctx, span := tp.Tracer("handlers").Start(msg.Context(), message.HandlerNameFromCtx(msg.Context()))
			defer span.End()
			msg.SetContext(ctx)
			return h(msg)
		}
	}, streamq.FailureMiddleware(nil))
	router.AddHandler("ship", "orders", sub, "shipments", pub, func(msg *message.Message) ([]*message.Message, error) {
		out := message.NewMessage(watermill.NewUUID(), msg.Payload)
		out.SetContext(msg.Context()) // "send shipments" is a child of the handler's span
		return []*message.Message{out}, nil
	})
	_ = router.Run(context.Background())
}
