// Command quickstart publishes ten orders to an 8-partition topic and handles them with a
// Watermill Router, each customer's orders in order, then exits once its consumer group has
// handled every order on the topic. It needs no Redis server: with REDIS_URL unset it runs on
// an embedded Redis (miniredis).
//
//	go run ./examples/quickstart                         # an embedded Redis (miniredis)
//	REDIS_URL=redis://host:6379/0 go run ./examples/quickstart
//
// Run two copies at once on one Redis server (the same REDIS_URL; two embedded ones are two
// Redis): each publishes its ten orders and both consume as the group quickstart-payments,
// sharing the topic's partitions, so together they handle the twenty orders, each once. Each
// copy exits when the group has handled every order published to the topic.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

// The example's own topic and group, so that it runs beside the other examples on one Redis.
const (
	topic      = "quickstart-orders"
	group      = "quickstart-payments"
	partitions = 8
	orders     = 10
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
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions}, logger)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: partitions,
	}, logger)
	if err != nil {
		return err
	}

	var handled atomic.Int64
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
	router.AddConsumerHandler("payments", topic, sub, func(msg *message.Message) error {
		partition, _ := streamq.PartitionFromCtx(msg.Context())
		fmt.Printf("order %s of %s on partition %d\n", msg.Payload, msg.Metadata.Get(streamq.PartitionKeyMetadata), partition)
		handled.Add(1)
		return nil // ack; an error nacks: the message is retried, then dead-lettered with the error as its reason
	})
	go func() { _ = router.Run(ctx) }() // Run returns when the router is closed
	<-router.Running()

	for i := range orders {
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf(`{"order":%d,"from":%d}`, i, os.Getpid())))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("customer-%d", i%3)) // same key, same partition, in order
		if err := pub.Publish(topic, msg); err != nil {
			return err
		}
		select { // an order every 300 ms: a copy started meanwhile gets its share of the partitions
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := waitGroupDone(ctx, client); err != nil {
		return fmt.Errorf("handled %d orders here: %w", handled.Load(), err)
	}
	if err := router.Close(); err != nil { // closes the subscriber too; the client is ours to close
		return err
	}
	fmt.Printf("published %d orders, handled %d here; group %s has handled every order of %s\n", orders, handled.Load(), group, topic)
	return nil
}

// waitGroupDone waits until the group has handled every order published to the topic, by
// whichever of its members: it exists on every partition, has nothing left to deliver and
// nothing delivered but unacked.
func waitGroupDone(ctx context.Context, client redis.UniversalClient) error {
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		lag, err := adm.GroupLag(ctx, topic, group)
		switch {
		case errors.Is(err, admin.ErrGroupNotFound): // not created yet
		case err != nil:
			return err
		case len(lag.Partitions) == partitions && lag.Exact && lag.Lag == 0 && lag.Pending == 0:
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("group %s has %d orders of %s left to handle: %w", group, lag.Lag+lag.Pending, topic, ctx.Err())
		}
	}
}
