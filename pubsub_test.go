package streamq_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestPubSubOnePartition(t *testing.T) {
	t.Parallel()
	streamqtest.Universal(t, 1, false, false)
}

func TestPubSubEightPartitionsKeyedByPayload(t *testing.T) {
	t.Parallel()
	streamqtest.Universal(t, 8, true, false)
}

// TestPubSubEightPartitionsOrderedByKey: the keyed 8-partition configuration with per-key
// order (OrderByKey, 16 handlers per partition, ordered by the same key as the Publisher's).
func TestPubSubEightPartitionsOrderedByKey(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	streamqtest.RunUniversalTuned(t, client, streamqtest.UniversalFeatures(), 8, true, true, func(c *streamq.SubscriberConfig) {
		c.Delivery.OrderByKey, c.Delivery.MaxInFlightPerPartition = true, 16
		c.Delivery.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	})
}

// TestPubSubOnlyThePublisherStatesTheCount: 8 partitions keyed by payload, stated by the
// Publisher alone; every Subscriber keeps the default config (no count), so subscribers that
// start first wait for the topic instead of creating it with one partition.
func TestPubSubOnlyThePublisherStatesTheCount(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	streamqtest.RunUniversalWith(t, client, streamqtest.UniversalFeatures(), 8, true, false)
}

// TestPubSubCluster runs the universal suite (8 partitions keyed by payload, guaranteed order)
// on a Redis Cluster of 3 masters, where the partitions of every topic spread over the masters
// and each owned partition is read by its own blocking XREADGROUP. Watermill's TestReconnect
// skips here (no RestartServiceCommand), so its harness race (see pubsub_reconnect_test.go)
// cannot fire; failover is covered by TestClusterFailover.
func TestPubSubCluster(t *testing.T) {
	t.Parallel()
	streamqtest.RunUniversal(t, streamqtest.ThreeMasters.Start(t), streamqtest.UniversalFeatures(), 8, true)
}

// TestPubSubSentinel runs the universal suite (8 partitions keyed by payload, guaranteed
// order) through a go-redis FailoverClient over three sentinels watching a master and its
// replica. Watermill's TestReconnect skips (no RestartServiceCommand: restarting the master
// may or may not make the sentinels fail over, depending on how long it takes); a failover is
// covered by TestSentinelFailover.
func TestPubSubSentinel(t *testing.T) {
	t.Parallel()
	streamqtest.RunUniversal(t, redistest.StartSentinel(t).FailoverClient(t), streamqtest.UniversalFeatures(), 8, true)
}
