// Command quickstart publishes ten orders to an 8-partition topic and handles them with a
// Watermill Router, each customer's orders in order, then exits.
//
//	go run ./examples/quickstart                         # an embedded Redis (miniredis)
//	REDIS_URL=redis://host:6379/0 go run ./examples/quickstart
//
// Run it twice at once: the two instances share the topic's partitions.
package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := exampleredis.Connect(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()
	logger := watermill.NewStdLogger(false, false)

	// Both sides state the partition count: whichever starts first creates the topic with 8.
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8}, logger)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: "payments", DefaultPartitionCount: 8,
	}, logger)
	if err != nil {
		return err
	}

	const orders = 10
	var handled atomic.Int64
	done := make(chan struct{})
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	router.AddConsumerHandler("payments", "orders", sub, func(msg *message.Message) error {
		partition, _ := streamq.PartitionFromCtx(msg.Context())
		fmt.Printf("order %s of %s on partition %d\n", msg.Payload, msg.Metadata.Get(streamq.PartitionKeyMetadata), partition)
		if handled.Add(1) == orders {
			close(done)
		}
		return nil // ack; an error nacks: the message is retried, then dead-lettered
	})
	go func() { _ = router.Run(ctx) }() // Run returns when the router is closed
	<-router.Running()

	for i := range orders {
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf(`{"order":%d}`, i)))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("customer-%d", i%3)) // same key, same partition, in order
		if err := pub.Publish("orders", msg); err != nil {
			return err
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("handled %d of %d orders: %w", handled.Load(), orders, ctx.Err())
	}
	fmt.Printf("handled %d of %d orders\n", handled.Load(), orders)
	return router.Close() // closes the subscriber too; the client is ours to close
}
