package streamq_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

// errInvalidOrder is an error no retry can fix.
var errInvalidOrder = errors.New("invalid order")

// Per-key order with parallel handlers: a partition runs up to 64 handlers at once, and the
// messages of one partition key are handled one after another, in the order published.
func ExampleSubscriberConfig_orderByKey() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: "billing",
		Delivery:      streamq.DeliveryConfig{OrderByKey: true, MaxInFlightPerPartition: 64},
		// handlers at once per partition, one per key
	}, watermill.NopLogger{})
	if err != nil {
		panic(err)
	}
	defer sub.Close()
}

// Static membership for rolling restarts: a member with a stable name that restarts within
// the grace takes its partitions back at once, and nobody else takes them meanwhile.
func ExampleSubscriberConfig_staticMembership() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: "billing",
		Membership:    streamq.MembershipConfig{ConsumerName: os.Getenv("POD_NAME"), StaticMemberGrace: 30 * time.Second}, // stable across restarts, one process each
		// at least LeaseTTL
	}, watermill.NopLogger{})
	if err != nil {
		panic(err)
	}
	// When scaling down for good, hand the partitions over at once instead of keeping them
	// for the grace.
	sub.LeaveOnClose()
	_ = sub.Close()
}

// Middleware for a Router in front of streamq's retries: every failure is recorded in the
// message's x-last-error, errors no retry can fix go straight to the dead-letter queue, and
// the others are retried quickly in the process before streamq retries them with backoff.
func ExampleFailureMiddleware() {
	router, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		panic(err)
	}
	router.AddMiddleware(
		streamq.FailureMiddleware(func(err error) bool { return errors.Is(err, errInvalidOrder) }), // outermost
		middleware.Retry{
			MaxRetries:      2,
			InitialInterval: 100 * time.Millisecond,
			ShouldRetry:     func(p middleware.RetryParams) bool { return !errors.Is(p.Err, streamq.ErrDeadLettered) },
		}.Middleware,
	)
	_ = router.Close()
}

// A handler whose work completes after it returns (a batch written elsewhere) settles the
// message later; the partition goes on with its next message meanwhile.
func ExampleDeferAck() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	pub, _ := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1}, nil)
	defer pub.Close()
	sub, _ := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "writer",
		Read: streamq.ReadConfig{BlockTime: 10 * time.Millisecond}}, nil)
	defer sub.Close()
	messages, err := sub.Subscribe(context.Background(), "events")
	if err != nil {
		panic(err)
	}
	if err := pub.Publish("events", message.NewMessage(watermill.NewUUID(), []byte("event 1"))); err != nil {
		panic(err)
	}

	msg := <-messages
	d, err := streamq.DeferAck(msg) // the handler's part
	if err != nil {
		panic(err)
	}
	msg.Ack() // the handler returns; the entry stays pending until d settles it

	// Later, once the batch is written (d.Nack() if it failed: retried by the retry policy):
	fmt.Println(d.Ack()) // fenced by the lease like any ack: ErrLeaseLost once handed over
	// Output: <nil>
}

// Pause stops delivery on every subscription of a Subscriber while it keeps its partitions;
// the handlers finish what they hold, then Resume goes on where each partition stopped.
func ExampleSubscriber_Pause() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer client.Close()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "billing"}, nil)
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	sub.Pause()
	tick := time.NewTicker(10 * time.Millisecond)
	for sub.InFlight() > 0 { // the handlers finish what they hold
		<-tick.C
	}
	tick.Stop()
	// ... take a checkpoint ...
	sub.Resume()
}
