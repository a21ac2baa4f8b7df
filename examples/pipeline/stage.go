package main

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/examples/internal/exampleredis"
)

// runStage is the first stage, in a child process: orders in, two invoices out per order.
// With kill, it SIGKILLs itself once the invoices of order killAt are published.
func runStage(kill bool) error {
	ctx := context.Background()
	client, err := exampleredis.Connect(ctx)
	if err != nil {
		return err
	}
	logger := watermill.NopLogger{}
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: stageGroup,
		// A short lease, so that the next process takes the partition over in seconds (the
		// default, 10 s, is for networks that pause).
		Membership: streamq.MembershipConfig{LeaseTTL: 3 * time.Second, RenewInterval: time.Second},
	}, logger)
	if err != nil {
		return err
	}
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions}, logger)
	if err != nil {
		return err
	}
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return err
	}
	router.AddMiddleware(streamq.FailureMiddleware(nil))
	if *derive {
		router.AddMiddleware(streamq.DeriveUUIDs) // the invoices of an order get the same UUIDs every time
	}
	var out message.Publisher = pub
	if kill {
		out = killAfter{pub}
	}
	router.AddHandler("invoice", orders, sub, invoices, out, invoice)
	return router.Run(ctx)
}

// invoice makes an order's two invoice lines.
func invoice(msg *message.Message) ([]*message.Message, error) {
	out := make([]*message.Message, 2)
	for i, line := range []string{"goods", "shipping"} {
		out[i] = message.NewMessage(watermill.NewUUID(), []byte(line+" of "+string(msg.Payload)))
		out[i].Metadata.Set("order", msg.Metadata.Get("order"))
		out[i].Metadata.Set("line", line)
	}
	return out, nil
}

// killAfter publishes, and kills the process once the invoices of order killAt are in Redis:
// the order is not acked yet.
type killAfter struct{ message.Publisher }

func (k killAfter) Publish(topic string, msgs ...*message.Message) error {
	err := k.Publisher.Publish(topic, msgs...)
	if err == nil && len(msgs) > 0 && msgs[0].Metadata.Get("order") == strconv.Itoa(killAt) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return err
}
