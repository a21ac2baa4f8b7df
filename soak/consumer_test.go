//go:build soak

package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

// errNack is what handlers return to nack (retry with backoff).
var errNack = errors.New("soak: nack")

// maxWork bounds the simulated work of a handler, so a Close always finds work in flight.
const maxWork = 2 * time.Millisecond

// runConsumer is the consumer role: one member of a group, through a Watermill Router,
// until SIGTERM, which closes the subscriber gracefully (drain, flush acks, release leases).
func runConsumer(env childEnv) int {
	led, err := openLedger(env.ledger, env.name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer led.close()
	client := newClient(env.addr)
	defer client.Close()
	logger := newLogger(led)
	sub, err := streamq.NewSubscriber(subscriberConfig(client, env), logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 2 * closeTimeout}, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	router.AddMiddleware(streamq.FailureMiddleware(nil))
	h := &handler{led: led, group: env.group}
	router.AddConsumerHandler("soak", topic, sub, h.handle)
	led.write(event{Ev: evStart, Pid: os.Getpid(), Part: -1, Group: env.group})
	return serve(router, sub, led)
}

func subscriberConfig(client redis.UniversalClient, env childEnv) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client: client, ConsumerGroup: env.group, Membership: streamq.MembershipConfig{ConsumerName: env.name, LeaseTTL: leaseTTL, RenewInterval: renewInterval, RebalanceInterval: rebalance},
		DefaultPartitionCount: partitions,

		Read: streamq.ReadConfig{BlockTime: 100 * time.Millisecond}, Reclaim: streamq.ReclaimConfig{ScanInterval: 3 * time.Second, Idle: 5 * time.Second},
		Delivery: streamq.DeliveryConfig{CloseTimeout: closeTimeout}, Retry: streamq.RetryConfig{Policy: retryPolicy, MoverInterval: 200 * time.Millisecond},
	}
}

// serve runs the router until SIGTERM, then closes the subscriber (which drains in-flight
// messages and flushes their acks) and the router.
func serve(router *message.Router, sub *streamq.Subscriber, led *ledger) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- router.Run(context.Background()) }()
	select {
	case <-term:
	case err := <-done:
		fmt.Fprintln(os.Stderr, "router stopped on its own:", err)
		return 1
	}
	closeErr := errors.Join(sub.Close(), router.Close(), <-done)
	s := sub.Stats()
	led.write(event{Ev: evEnd, Part: -1, Count: s.Delivered,
		Err: fmt.Sprintf("acked=%d nacked=%d deadLettered=%d leasesLost=%d malformed=%d payloadMissing=%d",
			s.Acked, s.Nacked, s.DeadLettered, s.LeasesLost, s.Malformed, s.PayloadMissing)})
	if closeErr != nil {
		fmt.Fprintln(os.Stderr, "close:", closeErr)
		return 1
	}
	return 0
}

// handler records every delivery in the ledger before answering it as the message's fate
// for this group says.
type handler struct {
	led   *ledger
	group string
}

func (h *handler) handle(msg *message.Message) error {
	at := time.Now().UnixNano()
	ctx := msg.Context()
	p, _ := streamq.PartitionFromCtx(ctx)
	retries, _ := streamq.RetryCountFromCtx(ctx)
	count, _ := streamq.DeliveryCountFromCtx(ctx)
	id, _ := streamq.StreamIDFromCtx(ctx)
	bad := verifyPayload(msg)
	res := fateOf(msg.UUID, h.group).result(retries)
	if bad != "" {
		res = resAck // recorded and failed at the end; acked so the partition moves on
	}
	h.led.write(event{Ev: evHandled, T: at, Group: h.group, UUID: msg.UUID, Key: msg.Metadata.Get(mdKey),
		Seq: seqOf(msg), Part: p, Retry: retries, Count: count, ID: id, Res: res, Bad: bad,
		RGrp: msg.Metadata.Get(streamq.RetryGroupMetadata)})
	time.Sleep(rand.N(maxWork)) // simulated work: not a polling loop
	switch res {
	case resNack:
		return errNack
	case resDLQ:
		return streamq.DeadLetter(msg, errors.New(deadLetterReason))
	}
	return nil
}
