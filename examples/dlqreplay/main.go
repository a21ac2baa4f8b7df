// Command dlqreplay shows a DLQ handler: a Router handler dead-letters an order it cannot
// handle yet; a second handler, on the topic's DLQ, reads the dead letter's record, fixes the
// message and replays it to its original partition, where the first handler now takes it.
//
// It needs no Redis server: with REDIS_URL unset it runs on an embedded Redis (miniredis). It
// uses a topic of its own each run and the groups dlqreplay-payments and dlqreplay-fixers, so
// it runs beside the other examples.
//
//	go run ./examples/dlqreplay      # Redis at $REDIS_URL, else an embedded one (miniredis)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dlqreplay:", err)
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
	logger := watermill.NopLogger{}
	topic := "dlqreplay-orders-" + watermill.NewShortUUID() // a topic of its own each run
	subscriber := func(group string) (*streamq.Subscriber, error) {
		return streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: group, DefaultPartitionCount: 4}, logger)
	}
	payments, err := subscriber("dlqreplay-payments")
	if err != nil {
		return err
	}
	fixers, err := subscriber("dlqreplay-fixers")
	if err != nil {
		return err
	}
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	paid := make(chan struct{})
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
	router.AddConsumerHandler("payments", topic, payments, func(msg *message.Message) error {
		if msg.Metadata.Get("currency") == "" {
			fmt.Printf("payments: order %s has no currency: dead-lettered\n", msg.Payload)
			return streamq.DeadLetter(msg, errors.New("no currency")) // straight to the DLQ, no retries
		}
		fmt.Printf("payments: order %s paid in %s\n", msg.Payload, msg.Metadata.Get("currency"))
		close(paid)
		return nil
	})
	router.AddConsumerHandler("fixers", streamq.DLQTopic(topic), fixers, func(msg *message.Message) error {
		letter, _ := streamq.DeadLetterFromCtx(msg.Context())
		fmt.Printf("fixers: dead letter from group %s, partition %d: %s\n", letter.Group, letter.OriginalPartition, letter.Reason)
		msg.Metadata.Set("currency", "EUR")
		streamq.Replay(msg) // acked: appended back to its partition, for the failing group only
		return nil
	})
	go func() { _ = router.Run(ctx) }()
	<-router.Running()

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, logger)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	if err := pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("17"))); err != nil {
		return err
	}
	select {
	case <-paid:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := router.Close(); err != nil {
		return err
	}
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	_, err = adm.DeleteTopic(ctx, topic)
	return err
}
