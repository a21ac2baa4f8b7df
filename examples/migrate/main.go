// Command migrate switches a live watermill-redisstream topic to streamq without stopping
// its consumers, as docs/migration.md describes. It needs no Redis server: with REDIS_URL
// unset it runs on an embedded Redis (miniredis). Its topic and group (migrate-orders,
// migrate-payments) are its own, so it runs beside the other examples.
//
//	go run ./examples/migrate                         # an embedded Redis (miniredis)
//	REDIS_URL=redis://host:6379/0 go run ./examples/migrate
//
// One Router runs both subscribers of the consumer group with the same handler: the
// watermill-redisstream one drains the old stream, the streamq one takes the new topic. The
// publishers switch by configuration only (newPublisher's publishTo). Once an import dry run
// reports the old group drained (nothing pending, nothing undelivered), the old handler
// stops, and an import moves anything it left behind.
package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

const (
	topic  = "migrate-orders"   // the same Watermill topic name on both sides: the keys do not collide
	group  = "migrate-payments" // the same consumer group name on both sides
	orders = 30
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

// newPublisher is the one place that knows which Pub/Sub the publishers write to: switching
// them is a configuration change, the code that publishes stays the same.
func newPublisher(publishTo string, client redis.UniversalClient, logger watermill.LoggerAdapter) (message.Publisher, error) {
	if publishTo == "redisstream" {
		return redisstream.NewPublisher(redisstream.PublisherConfig{Client: client}, logger)
	}
	return streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8}, logger)
}

// publish sends orders from..to-1 through pub, each keyed by its customer.
func publish(pub message.Publisher, from, to int) error {
	for i := from; i < to; i++ {
		msg := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf(`{"order":%d}`, i)))
		msg.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("customer-%d", i%3))
		if err := pub.Publish(topic, msg); err != nil {
			return err
		}
	}
	return nil
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

	// Before the switch: the publishers write to watermill-redisstream. (Its Publisher and
	// Subscriber close the client they are given: each gets a client of its own.)
	oldPub, err := newPublisher("redisstream", redis.NewClient(client.Options()), logger)
	if err != nil {
		return err
	}
	if err := publish(oldPub, 0, orders/2); err != nil {
		return err
	}
	_ = oldPub.Close()

	// During the switch: one Router, both subscribers of the group, the same handler.
	oldSub, err := redisstream.NewSubscriber(redisstream.SubscriberConfig{
		Client: redis.NewClient(client.Options()), ConsumerGroup: group, OldestId: "0",
	}, logger)
	if err != nil {
		return err
	}
	newSub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: 8,
	}, logger)
	if err != nil {
		return err
	}
	var handled, viaOld atomic.Int64
	done := make(chan struct{})
	handle := func(via string) message.NoPublishHandlerFunc {
		return func(msg *message.Message) error {
			if via == "redisstream" {
				viaOld.Add(1)
			}
			fmt.Printf("%-11s order %s of %s\n", via, msg.Payload, msg.Metadata.Get(streamq.PartitionKeyMetadata))
			if handled.Add(1) == orders {
				close(done)
			}
			return nil
		}
	}
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
	oldHandler := router.AddConsumerHandler("payments-redisstream", topic, oldSub, handle("redisstream"))
	router.AddConsumerHandler("payments-streamq", topic, newSub, handle("streamq"))
	go func() { _ = router.Run(ctx) }()
	<-router.Running()

	// The publishers are redeployed with PUBLISH_TO=streamq: new orders go to streamq.
	newPub, err := newPublisher("streamq", client, logger)
	if err != nil {
		return err
	}
	defer func() { _ = newPub.Close() }()
	if err := publish(newPub, orders/2, orders); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("handled %d of %d orders: %w", handled.Load(), orders, ctx.Err())
	}
	fmt.Printf("handled %d of %d orders: %d through watermill-redisstream, %d through streamq\n",
		handled.Load(), orders, viaOld.Load(), handled.Load()-viaOld.Load())

	// The old stream is drained when its group has nothing pending and nothing undelivered.
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	if err := waitDrained(ctx, adm); err != nil {
		return err
	}

	// Drained: stop the old handler (the next deployment drops it), then move whatever it
	// may have left behind (messages in flight when it stopped, or a late old publisher's).
	oldHandler.Stop()
	<-oldHandler.Stopped()
	moved, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: topic, Group: group})
	if err != nil {
		return err
	}
	fmt.Printf("old handler stopped; imported %d left-over entries\n", moved.Imported)
	return router.Close() // closes both subscribers; the client is ours to close
}

// waitDrained polls an import dry run, which counts what the old group still holds (as
// `streamq import migrate-orders --group migrate-payments --dry-run` does), until it holds nothing.
func waitDrained(ctx context.Context, adm *admin.Admin) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		left, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: topic, Group: group, DryRun: true})
		if err != nil {
			return err
		}
		if left.Pending+left.Undelivered == 0 {
			fmt.Println("old stream drained: nothing pending, nothing undelivered")
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("old stream not drained (%d pending, %d undelivered): %w", left.Pending, left.Undelivered, ctx.Err())
		}
	}
}
