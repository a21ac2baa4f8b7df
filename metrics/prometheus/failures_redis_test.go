package prometheus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// failureSub is a subscriber with fast timings that retries a nack once, then dead-letters.
func failureSub(t *testing.T, client redis.UniversalClient, group string, c streamq.MetricsCollector) *streamq.Subscriber {
	t.Helper()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, Metrics: c,
		Membership: streamq.MembershipConfig{RebalanceInterval: 150 * time.Millisecond, RenewInterval: 300 * time.Millisecond, LeaseTTL: 2 * time.Second},
		Read:       streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:     streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}, MoverInterval: 50 * time.Millisecond},
		Retention: streamq.RetentionConfig{TrimInterval: 100 * time.Millisecond, DLQMaxLen: 2},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

// consume handles every message of ch with handle until ctx is done.
func consume(ctx context.Context, ch <-chan *message.Message, handle func(*message.Message) bool) {
	go func() {
		for {
			select {
			case m, ok := <-ch:
				if !ok {
					return
				}
				if handle(m) {
					m.Ack()
				} else {
					m.Nack()
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

// TestCollectorSeesEveryFailureMetric causes, on a real redis-server, each failure path the
// metrics report (a retry, dead letters, a payload gone, DLQ retention, a replay from a DLQ
// handler, an admin delete and clear) and checks each family in the Prometheus registry.
func TestCollectorSeesEveryFailureMetric(t *testing.T) {
	const topic = "metrics-failures"
	client := redistest.Start(t).Client(t)
	c, reg := newCollector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Metrics: c, Payloads: streamq.PayloadConfig{Threshold: 16}}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })

	gone := message.NewMessage(watermill.NewUUID(), []byte(strings.Repeat("big", 20)))
	require.NoError(t, pub.Publish(topic, gone)) // offloaded, then its payload deleted
	deletePayloads(t, client, keys.New("", ""), topic)
	for i := range 4 { // each fails: retried once, then dead-lettered
		require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte{'f', byte('0' + i)})))
	}
	ch, err := failureSub(t, client, "g", c).Subscribe(ctx, topic)
	require.NoError(t, err)
	consume(ctx, ch, func(*message.Message) bool { return false })
	dlqCh, err := failureSub(t, client, "fixers", c).Subscribe(ctx, streamq.DLQTopic(topic))
	require.NoError(t, err)
	replayed := false
	consume(ctx, dlqCh, func(m *message.Message) bool {
		if !replayed {
			streamq.Replay(m)
			replayed = true
		}
		return true
	})
	require.EventuallyWithT(t, func(t *assert.CollectT) {
		got, err := flatten(reg)
		require.NoError(t, err)
		assert.Positive(t, familySum(got, "streamq_retried_total"), "retried")
		assert.Positive(t, familySum(got, "streamq_dead_lettered_total"), "dead-lettered")
		assert.Positive(t, familySum(got, "streamq_payload_missing_total"), "payload missing")
		assert.Positive(t, familySum(got, `streamq_trimmed_total`), "DLQ retention")
		assert.Positive(t, familySum(got, "streamq_dlq_replay_seconds_count"), "replay from a DLQ handler")
	}, 30*time.Second, 50*time.Millisecond)

	adm, err := admin.New(client, admin.Options{Metrics: c})
	require.NoError(t, err)
	letters, err := adm.DLQEntries(ctx, topic, 10)
	require.NoError(t, err)
	require.NotEmpty(t, letters)
	ok, err := adm.DeleteDeadLetter(ctx, topic, letters[0].Partition, letters[0].ID)
	require.NoError(t, err)
	require.True(t, ok)
	cleared, err := adm.ClearDLQ(ctx, topic)
	require.NoError(t, err)
	require.Positive(t, cleared, "DLQ retention keeps 2: one is left to clear")
	got := samples(t, reg)
	assert.Equal(t, 1.0, got[`streamq_dlq_deleted_total{topic="`+topic+`"}`])
	assert.Equal(t, float64(cleared), got[`streamq_dlq_cleared_total{topic="`+topic+`"}`])
}

// deletePayloads removes every offloaded payload of topic's partition 0.
func deletePayloads(t *testing.T, client *redis.Client, space keys.Space, topic string) {
	t.Helper()
	refs, err := client.Keys(context.Background(), space.Payload(topic, 0, "*")).Result()
	require.NoError(t, err)
	require.NotEmpty(t, refs, "nothing was offloaded")
	require.NoError(t, client.Del(context.Background(), refs...).Err())
}

// familySum is the sum of every series of a family (by name prefix, labels included).
func familySum(got map[string]float64, name string) float64 {
	sum := 0.0
	for series, v := range got {
		if strings.HasPrefix(series, name+"{") || series == name {
			sum += v
		}
	}
	return sum
}
