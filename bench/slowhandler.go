package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
)

// The slow-handler workload: a backlog over 64 keys consumed through a Router whose
// handler takes 5 ms, in each ordering mode, on 1 and 8 partitions. What it shows is how
// much of the handlers' waiting each mode overlaps: per-partition order runs one handler per
// partition, per-key order up to N at once while each key's messages stay in order.
const (
	wSlow        = "slow_handler"
	slowKeys     = 64
	slowHandler  = 5 * time.Millisecond
	slowPayload  = 16
	slowDuration = 4 * time.Second
)

// slowMode is one ordering mode of the workload.
type slowMode struct {
	name  string
	n     int  // MaxInFlightPerPartition
	byKey bool // OrderByKey
}

var slowModes = []slowMode{
	{name: "per-partition order", n: 1},
	{name: "per-key order, N=16", n: 16, byKey: true},
	{name: "per-key order, N=64", n: 64, byKey: true},
	{name: "unordered, N=64", n: 64},
}

// slowHandler measures one mode on partitions partitions: the rate over slowDuration of a
// backlog large enough not to run out.
func (e *env) slowHandler(ctx context.Context, partitions int, mode slowMode) Result {
	tr := transport{Name: fmt.Sprintf("streamq-%dp", partitions), kind: kindStreamq, partitions: partitions}
	r := Result{Workload: wSlow, Size: slowPayload, Transport: fmt.Sprintf("%dp, %s", partitions, mode.name)}
	// Enough for the fastest mode: every handler busy for the whole window.
	backlog := partitions * mode.n * int(slowDuration/slowHandler) * 5 / 4
	topic := fmt.Sprintf("bench-slow-%dp-%d-%v", partitions, mode.n, mode.byKey)
	if err := e.prefillKeyed(ctx, tr, topic, backlog); err != nil {
		return r.failed(err)
	}
	settle()
	var handled atomic.Int64
	win := e.startWindow(wSlow, tr, slowPayload)
	stop, err := e.runSlowRouter(ctx, topic, partitions, mode, &handled)
	if err != nil {
		win.stop()
		return r.failed(err)
	}
	start := time.Now()
	select {
	case <-time.After(slowDuration):
	case <-ctx.Done():
	}
	n, elapsed := handled.Load(), time.Since(start)
	win.stop()
	stop()
	r.Messages, r.Seconds = n, elapsed.Seconds()
	r.set(float64(n) / elapsed.Seconds())
	r.Extra = map[string]float64{"backlog": float64(backlog), "handler_ms": float64(slowHandler.Milliseconds())}
	win.attach(&r)
	return r
}

// prefillKeyed publishes n messages over slowKeys keys, 500 per Publish call.
func (e *env) prefillKeyed(ctx context.Context, tr transport, topic string, n int) error {
	c := e.client()
	defer c.Close()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: c, DefaultPartitionCount: tr.partitions, Trim: streamq.TrimConfig{MaxLen: -1}}, e.logger)
	if err != nil {
		return err
	}
	defer pub.Close()
	payload := randomPayload(slowPayload)
	for from := 0; from < n && ctx.Err() == nil; from += 500 {
		msgs := make([]*message.Message, 0, 500)
		for i := from; i < min(from+500, n); i++ {
			m := message.NewMessage(watermill.NewUUID(), payload)
			m.Metadata.Set(streamq.PartitionKeyMetadata, "k"+strconv.Itoa(i%slowKeys))
			msgs = append(msgs, m)
		}
		if err := pub.Publish(topic, msgs...); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// runSlowRouter consumes topic through a Router with the 5 ms handler; stop closes it.
func (e *env) runSlowRouter(ctx context.Context, topic string, partitions int, mode slowMode, handled *atomic.Int64) (func(), error) {
	c := e.client()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: c, ConsumerGroup: consumerGroup, DefaultPartitionCount: partitions, Read: streamq.ReadConfig{BatchCount: e.cfg.batchCount},
		Delivery: streamq.DeliveryConfig{MaxInFlightPerPartition: mode.n, OrderByKey: mode.byKey},
	}, e.logger)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	cons, err := e.startRouter(ctx, c, sub, topic, func(*message.Message) error {
		time.Sleep(slowHandler)
		handled.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() { cons.stop() }, nil
}
