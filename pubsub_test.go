package streamq

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// universal runs Watermill's universal Pub/Sub suite against a redis-server of its own.
func universal(t *testing.T, partitions int, keyFromPayload, restart bool) {
	srv, client := startRedis(t)
	features := universalFeatures()
	if restart {
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
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		return newPubSub(t, client, partitions, keyFromPayload, subscriberStatesCount, group)
	}
	tests.TestPubSub(t, features,
		func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") },
		constructor)
}

func newPubSub(t *testing.T, client redis.UniversalClient, partitions int, keyFromPayload, subscriberStatesCount bool, group string) (message.Publisher, message.Subscriber) {
	pcfg := PublisherConfig{Client: client, DefaultPartitionCount: partitions, MaxLen: -1}
	if keyFromPayload {
		pcfg.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	}
	pub, err := NewPublisher(pcfg, testLogger())
	require.NoError(t, err)
	scfg := fastSub(client, group)
	if subscriberStatesCount {
		scfg.DefaultPartitionCount = partitions
	}
	sub, err := NewSubscriber(scfg, testLogger())
	require.NoError(t, err)
	return pub, sub
}

func TestPubSubOnePartition(t *testing.T) { universal(t, 1, false, false) }

func TestPubSubEightPartitionsKeyedByPayload(t *testing.T) { universal(t, 8, true, false) }

// TestPubSubOnlyThePublisherStatesTheCount: 8 partitions keyed by payload, stated by the
// Publisher alone; every Subscriber keeps the default config (no count), so subscribers that
// start first wait for the topic instead of creating it with one partition.
func TestPubSubOnlyThePublisherStatesTheCount(t *testing.T) {
	_, client := startRedis(t)
	runUniversalWith(t, client, universalFeatures(), 8, true, false)
}

// TestPubSubCluster runs the universal suite (8 partitions keyed by payload, guaranteed order)
// on a Redis Cluster of 3 masters, where the partitions of every topic spread over the masters
// and each owned partition is read by its own blocking XREADGROUP. Watermill's TestReconnect
// skips here (no RestartServiceCommand), so its harness race (see pubsub_reconnect_test.go)
// cannot fire; failover is covered by TestClusterFailover.
func TestPubSubCluster(t *testing.T) {
	runUniversal(t, threeMasters.start(t), universalFeatures(), 8, true)
}
