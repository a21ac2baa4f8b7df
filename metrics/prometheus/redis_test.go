package prometheus_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestCollectorWithRedis runs a Publisher and a Subscriber on a real redis-server with the
// Collector as their metrics and checks what Prometheus gathers.
func TestCollectorWithRedis(t *testing.T) {
	const (
		topic    = "metrics-orders"
		group    = "metrics-group"
		consumer = "member-1"
		total    = 20
	)
	client := redistest.Start(t).Client(t)
	c, reg := newCollector(t)

	pub, err := streamq.NewPublisher(streamq.PublisherConfig{
		Client: client, DefaultPartitionCount: 2, Metrics: c,
		Idempotency: streamq.IdempotencyConfig{ByUUID: true}, // a message published twice is a duplicate
	}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, DefaultPartitionCount: 2, ConsumerGroup: group, Membership: streamq.MembershipConfig{ConsumerName: consumer, RebalanceInterval: 150 * time.Millisecond, RenewInterval: 300 * time.Millisecond, LeaseTTL: 2 * time.Second}, Metrics: c,

		Read: streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)

	for i := range total {
		m := message.NewMessage(watermill.NewUUID(), []byte(strconv.Itoa(i)))
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%2))
		require.NoError(t, pub.Publish(topic, m))
		if i < 3 {
			require.NoError(t, pub.Publish(topic, m), "published again: a duplicate, dropped")
		}
	}
	for range total {
		select {
		case m := <-msgs:
			m.Ack()
		case <-ctx.Done():
			t.Fatal("timed out waiting for messages")
		}
	}

	labels := func(p int) string {
		return fmt.Sprintf(`{consumer=%q,group=%q,partition="%d",topic=%q}`, consumer, group, p, topic)
	}
	sum := func(got map[string]float64, name string) float64 {
		return got[name+labels(0)] + got[name+labels(1)]
	}
	// The worker records Acked and the handle time after it sees the Ack: poll.
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		got, err := flatten(reg)
		if !assert.NoError(t, err) {
			return
		}
		assert.Equal(t, float64(total), sum(got, "streamq_acked_total"))
		assert.Equal(t, float64(total), sum(got, "streamq_handle_seconds_count"))
		assert.Equal(t, 2.0, got[fmt.Sprintf(`streamq_leased_partitions{consumer=%q,group=%q,topic=%q}`, consumer, group, topic)])
	}, 10*time.Second, 20*time.Millisecond)

	got := samples(t, reg)
	for p := range 2 {
		assert.Equal(t, float64(total/2), got[fmt.Sprintf(`streamq_produced_total{partition="%d",topic=%q}`, p, topic)], "partition %d", p)
		assert.Equal(t, float64(total/2), got["streamq_consumed_total"+labels(p)], "partition %d", p)
		assert.Equal(t, float64(total/2), got["streamq_acked_total"+labels(p)], "partition %d", p)
		assert.Equal(t, float64(total/2), got["streamq_handle_seconds_count"+labels(p)], "partition %d", p)
	}
	assert.Equal(t, 2.0, got[fmt.Sprintf(`streamq_publish_duplicates_total{partition="0",topic=%q}`, topic)])
	assert.Equal(t, 1.0, got[fmt.Sprintf(`streamq_publish_duplicates_total{partition="1",topic=%q}`, topic)])
	assert.Equal(t, float64(total), sum(got, "streamq_consumed_total"))
	assert.Zero(t, sum(got, "streamq_retried_total"))
	assert.Zero(t, sum(got, "streamq_dead_lettered_total"))
	assert.Equal(t, 2.0, got[fmt.Sprintf(`streamq_eligible_partitions{consumer=%q,group=%q,topic=%q}`, consumer, group, topic)])

	// The member leaves: its series are no longer exported; the Publisher's stay.
	require.NoError(t, sub.Close())
	got = samples(t, reg)
	for name := range got {
		assert.NotContains(t, name, fmt.Sprintf("consumer=%q", consumer), "a series of the member that left")
	}
	assert.Equal(t, float64(total/2), got[fmt.Sprintf(`streamq_produced_total{partition="0",topic=%q}`, topic)])
}
