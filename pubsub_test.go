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
	features := tests.Features{
		ConsumerGroups:                      true,
		ExactlyOnceDelivery:                 false,
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: false,
		Persistent:                          true,
		NewSubscriberReceivesOldMessages:    false,
	}
	if restart {
		features.RestartServiceCommand = srv.RestartCommand()
	}
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		return newPubSub(t, client, partitions, keyFromPayload, group)
	}
	tests.TestPubSub(t, features,
		func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") },
		constructor)
}

func newPubSub(t *testing.T, client redis.UniversalClient, partitions int, keyFromPayload bool, group string) (message.Publisher, message.Subscriber) {
	pcfg := PublisherConfig{Client: client, DefaultPartitionCount: partitions, MaxLen: -1}
	if keyFromPayload {
		pcfg.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	}
	pub, err := NewPublisher(pcfg, testLogger())
	require.NoError(t, err)
	scfg := fastSub(client, group)
	scfg.DefaultPartitionCount = partitions
	sub, err := NewSubscriber(scfg, testLogger())
	require.NoError(t, err)
	return pub, sub
}

func TestPubSubOnePartition(t *testing.T) { universal(t, 1, false, false) }

func TestPubSubEightPartitionsKeyedByPayload(t *testing.T) { universal(t, 8, true, false) }
