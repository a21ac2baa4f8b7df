package streamq_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

// A keyed publish to a partitioned topic, consumed in order by one group member. The example
// runs on an embedded miniredis; use any Redis, Sentinel or Cluster client instead.
func Example() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8}, nil)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: "payments",
		Read:          streamq.ReadConfig{BlockTime: 10 * time.Millisecond},
	}, nil)
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	messages, err := sub.Subscribe(context.Background(), "orders")
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 3; i++ {
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("order %d", i)))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, "customer-42")
		if err := pub.Publish("orders", msg); err != nil {
			panic(err)
		}
	}
	for i := 0; i < 3; i++ {
		msg := <-messages
		partition, _ := streamq.PartitionFromCtx(msg.Context())
		fmt.Printf("%s from partition %d\n", msg.Payload, partition)
		msg.Ack()
	}
	// Output:
	// order 1 from partition 1
	// order 2 from partition 1
	// order 3 from partition 1
}

// A handler result mapped to streamq's retry and dead-letter handling.
func ExampleDeadLetter() {
	handler := func(msg *message.Message) error {
		if len(msg.Payload) == 0 {
			// No retry can fix an empty order: straight to the partition's DLQ.
			return streamq.DeadLetter(msg, fmt.Errorf("empty order"))
		}
		return nil // Ack. Any other error: retried with backoff, then dead-lettered.
	}
	msg := message.NewMessage(watermill.NewUUID(), nil)
	fmt.Println(handler(msg))
	fmt.Println(msg.Metadata.Get(streamq.DeadLetterMetadata))
	// Output:
	// dead-lettered: empty order
	// empty order
}

// A Router handler of a topic's dead letters (registered on streamq.DLQTopic("orders") with
// any consumer group) reads why each letter failed and decides what becomes of it.
func ExampleDeadLetterFromCtx() {
	handler := func(msg *message.Message) error {
		letter, _ := streamq.DeadLetterFromCtx(msg.Context())
		switch {
		case letter.Group != "payments":
			return nil // ack: seen; the letter stays in the DLQ
		case strings.HasPrefix(letter.Reason, "retries exhausted"):
			streamq.Replay(msg) // appended back to letter.OriginalPartition, handled again
			return nil
		default:
			streamq.Drop(msg) // confirm and discard: deleted from the DLQ
			return nil
		}
	}
	_ = message.NoPublishHandlerFunc(handler) // router.AddConsumerHandler("orders-dlq", streamq.DLQTopic("orders"), sub, handler)
}

// The dead letters of a topic are a topic of their own.
func ExampleDLQTopic() {
	fmt.Println(streamq.DLQTopic("orders"))
	// Output: orders:dlq
}

// Per-topic read and filter settings for the topics one Subscriber serves through a Router:
// the Router calls Subscribe itself, and each subscription takes its topic's entry of Topics.
// MaxInFlight and MaxLeasedPartitions hold for the Subscriber over both topics.
func ExampleReadConfig() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: "billing",
		Delivery:      streamq.DeliveryConfig{MaxInFlight: 16},           // handlers at once, over every topic
		Membership:    streamq.MembershipConfig{MaxLeasedPartitions: 12}, // partitions leased, over every topic
		Topics: map[string]streamq.ReadConfig{
			// Small batches, and only the even partitions: another deployment takes the odd.
			"orders": {BatchCount: 10, PartitionModulo: 2, PartitionRemainder: 0},
			// Large batches with a longer poll for a busy, latency-tolerant topic.
			"audit": {BatchCount: 200, BlockTime: 500 * time.Millisecond},
		},
	}, nil)
	if err != nil {
		panic(err)
	}
	router, err := message.NewRouter(message.RouterConfig{}, nil)
	if err != nil {
		panic(err)
	}
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
	router.AddConsumerHandler("orders", "orders", sub, func(*message.Message) error { return nil })
	router.AddConsumerHandler("audit", "audit", sub, func(*message.Message) error { return nil })
	go func() { _ = router.Run(context.Background()) }()
	<-router.Running()
	_ = router.Close()
	_ = sub.Close()
}

// A Watermill Router consuming a partitioned topic: the handler's nil acks, an error nacks
// (the message is retried, then dead-lettered). Both sides state the partition count, so the
// topic has 8 partitions whichever starts first.
func ExampleNewSubscriber_router() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	logger := watermill.NopLogger{}

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8}, logger)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: "payments", DefaultPartitionCount: 8, Read: streamq.ReadConfig{BlockTime: 10 * time.Millisecond},
	}, logger)
	if err != nil {
		panic(err)
	}
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		panic(err)
	}
	handled := make(chan struct{}, 3)
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
	router.AddConsumerHandler("payments", "orders", sub, func(msg *message.Message) error {
		fmt.Printf("handled %s\n", msg.Payload)
		handled <- struct{}{}
		return nil
	})
	go func() { _ = router.Run(context.Background()) }()
	<-router.Running()

	for i := 1; i <= 3; i++ {
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("order %d", i)))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, "customer-42") // one key: one partition, in order
		if err := pub.Publish("orders", msg); err != nil {
			panic(err)
		}
	}
	for range 3 {
		<-handled
	}
	_ = router.Close() // closes the Subscriber too
	// Output:
	// handled order 1
	// handled order 2
	// handled order 3
}
