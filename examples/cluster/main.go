// Command cluster publishes and consumes on a Redis Cluster: every partition of a topic has its
// own hash slot, so the partitions spread over the masters.
//
// It needs a Redis Cluster (the embedded Redis is no cluster): set REDIS_CLUSTER_ADDRS to the
// nodes' addresses, comma-separated. It uses a topic of its own each run and the group
// cluster-payments, so it runs beside the other examples.
//
//	REDIS_CLUSTER_ADDRS=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002 go run ./examples/cluster
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run() error {
	addrs := os.Getenv("REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		return fmt.Errorf("set REDIS_CLUSTER_ADDRS to the cluster's nodes, e.g. 127.0.0.1:7000,127.0.0.1:7001")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	defer func() { _ = client.Close() }()
	topic := "cluster-orders-" + watermill.NewShortUUID() // a topic of its own each run
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 12}, nil)
	if err != nil {
		return err
	}
	defer func() { _ = pub.Close() }()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "cluster-payments", DefaultPartitionCount: 12}, nil)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Close() }()
	msgs, err := sub.Subscribe(ctx, topic)
	if err != nil {
		return err
	}
	const n = 24
	for i := range n {
		m := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprint(i)))
		m.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("customer-%d", i))
		if err := pub.Publish(topic, m); err != nil {
			return err
		}
	}
	seen := map[int]bool{}
	for range n {
		select {
		case m := <-msgs:
			p, _ := streamq.PartitionFromCtx(m.Context())
			seen[p] = true
			m.Ack()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	fmt.Printf("handled %d messages from %d partitions\n", n, len(seen))
	if err := sub.Close(); err != nil {
		return err
	}
	adm, err := admin.New(client, admin.Options{})
	if err != nil {
		return err
	}
	_, err = adm.DeleteTopic(ctx, topic)
	return err
}
