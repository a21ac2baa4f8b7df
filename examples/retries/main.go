// Command retries shows streamq's retries and dead-letter queue through a Watermill Router:
// one order fails twice and then succeeds (retried after a backoff), another always fails
// and lands in the DLQ after its retries, where admin lists it with the handler's error as
// its reason (FailureMiddleware records it).
//
// It needs a Redis server (parked retries run Lua with cmsgpack, which the embedded Redis
// lacks): REDIS_URL, else localhost:6379. It uses a topic of its own each run and the group
// retries-payments, so it runs beside the other examples.
//
//	go run ./examples/retries        # Redis at $REDIS_URL or localhost:6379
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "retries:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := exampleredis.ConnectServer(ctx, "parked retries run Lua with cmsgpack, which the embedded Redis lacks")
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()
	logger := watermill.NopLogger{}
	topic := "retries-orders-" + watermill.NewShortUUID() // a topic of its own each run

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, logger)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: "retries-payments", DefaultPartitionCount: 4,
		// Two retries, 200 ms then 400 ms after the failure, then the DLQ.
		Retry: streamq.RetryConfig{MaxRetries: 2, Policy: streamq.ExponentialBackoff{Base: 200 * time.Millisecond, Max: time.Second}},
	}, logger)
	if err != nil {
		return err
	}
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	settled := make(chan string, 4)
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // the handler's error becomes the retry's and the dead letter's reason
	router.AddConsumerHandler("payments", topic, sub, func(msg *message.Message) error {
		retries, _ := streamq.RetryCountFromCtx(msg.Context())
		switch order := string(msg.Payload); {
		case order == "flaky" && retries < 2:
			fmt.Printf("%s: failing (retry %d)\n", order, retries)
			return errors.New("payment service timed out") // nacked: retried after the backoff
		case order == "broken":
			fmt.Printf("%s: failing (retry %d)\n", order, retries)
			if retries == 2 {
				settled <- order // this nack exhausts the retries: the message goes to the DLQ
			}
			return errors.New("card declined")
		default:
			fmt.Printf("%s: paid after %d retries\n", order, retries)
			settled <- order
			return nil
		}
	})
	go func() { _ = router.Run(ctx) }()
	<-router.Running()
	for _, order := range []string{"flaky", "broken", "fine"} {
		if err := pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte(order))); err != nil {
			return err
		}
	}
	for range 3 {
		select {
		case <-settled:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := router.Close(); err != nil {
		return err
	}
	return showDLQ(ctx, client, topic)
}

// showDLQ lists the topic's dead letters once the last one is written, then deletes the
// example's topic.
func showDLQ(ctx context.Context, client redis.UniversalClient, topic string) error {
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	defer func() { _, _ = adm.DeleteTopic(context.WithoutCancel(ctx), topic) }()
	for {
		letters, err := adm.DLQEntries(ctx, topic, 10)
		if err != nil {
			return err
		}
		if len(letters) > 0 {
			for _, l := range letters {
				fmt.Printf("dead letter %s: %q, reason %q, group %s\n", l.ID, l.Payload, l.Reason, l.Group)
			}
			return nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
