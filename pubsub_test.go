package streamq_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// universal runs Watermill's universal Pub/Sub suite against a redis-server of its own.
func universal(t *testing.T, partitions int, keyFromPayload, restart bool) {
	srv, client := startRedis(t)
	features := universalFeatures()
	if restart {
		redistest.SkipShort(t, "restarting Redis")
		features.RestartServiceCommand = srv.RestartCommand()
	}
	runUniversal(t, client, features, partitions, keyFromPayload)
}

// universalFeatures are the guarantees streamq claims in the universal suite.
func universalFeatures() tests.Features {
	return tests.Features{
		ConsumerGroups:                      true,
		ExactlyOnceDelivery:                 false,
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: false,
		Persistent:                          true,
		NewSubscriberReceivesOldMessages:    false,
	}
}

func runUniversal(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload bool) {
	runUniversalWith(t, client, features, partitions, keyFromPayload, true)
}

// runUniversalWith runs the suite; subscriberStatesCount false leaves the Subscriber's
// DefaultPartitionCount at its default, so only the Publisher decides the partition count.
func runUniversalWith(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload, subscriberStatesCount bool) {
	runUniversalTuned(t, client, features, partitions, keyFromPayload, subscriberStatesCount, nil)
}

// runUniversalTuned is runUniversalWith with each Subscriber's config changed by tune (nil:
// none).
func runUniversalTuned(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload,
	subscriberStatesCount bool, tune func(*streamq.SubscriberConfig)) {
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		return newPubSub(t, client, partitions, keyFromPayload, subscriberStatesCount, group, tune)
	}
	tests.TestPubSub(t, features,
		func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") },
		constructor)
}

func newPubSub(t *testing.T, client redis.UniversalClient, partitions int, keyFromPayload, subscriberStatesCount bool, group string,
	tune func(*streamq.SubscriberConfig)) (message.Publisher, message.Subscriber) {
	pcfg := streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions, Trim: streamq.TrimConfig{MaxLen: -1}}
	if keyFromPayload {
		pcfg.Partitioning.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	}
	pub, err := streamq.NewPublisher(pcfg, testLogger())
	require.NoError(t, err)
	scfg := fastSub(client, group)
	if subscriberStatesCount {
		scfg.DefaultPartitionCount = partitions
	}
	if tune != nil {
		tune(&scfg)
	}
	sub, err := streamq.NewSubscriber(scfg, testLogger())
	require.NoError(t, err)
	return pub, sub
}

func TestPubSubOnePartition(t *testing.T) {
	t.Parallel()
	universal(t, 1, false, false)
}

func TestPubSubEightPartitionsKeyedByPayload(t *testing.T) {
	t.Parallel()
	universal(t, 8, true, false)
}

// TestPubSubEightPartitionsOrderedByKey: the keyed 8-partition configuration with per-key
// order (OrderByKey, 16 handlers per partition, ordered by the same key as the Publisher's).
func TestPubSubEightPartitionsOrderedByKey(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	runUniversalTuned(t, client, universalFeatures(), 8, true, true, func(c *streamq.SubscriberConfig) {
		c.Delivery.OrderByKey, c.Delivery.MaxInFlightPerPartition = true, 16
		c.Delivery.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	})
}

// TestPubSubOnlyThePublisherStatesTheCount: 8 partitions keyed by payload, stated by the
// Publisher alone; every Subscriber keeps the default config (no count), so subscribers that
// start first wait for the topic instead of creating it with one partition.
func TestPubSubOnlyThePublisherStatesTheCount(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	runUniversalWith(t, client, universalFeatures(), 8, true, false)
}

// TestPubSubCluster runs the universal suite (8 partitions keyed by payload, guaranteed order)
// on a Redis Cluster of 3 masters, where the partitions of every topic spread over the masters
// and each owned partition is read by its own blocking XREADGROUP. Watermill's TestReconnect
// skips here (no RestartServiceCommand), so its harness race (see pubsub_reconnect_test.go)
// cannot fire; failover is covered by TestClusterFailover.
func TestPubSubCluster(t *testing.T) {
	t.Parallel()
	runUniversal(t, threeMasters.start(t), universalFeatures(), 8, true)
}
