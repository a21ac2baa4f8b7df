package streamqtest

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// Universal runs Watermill's universal Pub/Sub suite against a redis-server of its own.
func Universal(t *testing.T, partitions int, keyFromPayload, restart bool) {
	srv, client := StartRedis(t)
	features := UniversalFeatures()
	if restart {
		redistest.SkipShort(t, "restarting Redis")
		features.RestartServiceCommand = srv.RestartCommand()
	}
	RunUniversal(t, client, features, partitions, keyFromPayload)
}

// UniversalFeatures are the guarantees streamq claims in the universal suite.
func UniversalFeatures() tests.Features {
	return tests.Features{
		ConsumerGroups:                      true,
		ExactlyOnceDelivery:                 false,
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: false,
		Persistent:                          true,
		NewSubscriberReceivesOldMessages:    false,
	}
}

// RunUniversal runs the suite on client with the Publisher and the Subscribers stating the
// partition count.
func RunUniversal(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload bool) {
	RunUniversalWith(t, client, features, partitions, keyFromPayload, true)
}

// RunUniversalWith runs the suite; subscriberStatesCount false leaves the Subscriber's
// DefaultPartitionCount at its default, so only the Publisher decides the partition count.
func RunUniversalWith(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload, subscriberStatesCount bool) {
	RunUniversalTuned(t, client, features, partitions, keyFromPayload, subscriberStatesCount, nil)
}

// RunUniversalTuned is RunUniversalWith with each Subscriber's config changed by tune (nil:
// none).
func RunUniversalTuned(t *testing.T, client redis.UniversalClient, features tests.Features, partitions int, keyFromPayload,
	subscriberStatesCount bool, tune func(*streamq.SubscriberConfig)) {
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		return NewPubSub(t, client, partitions, keyFromPayload, subscriberStatesCount, group, tune)
	}
	tests.TestPubSub(t, features,
		func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") },
		constructor)
}

// NewPubSub is the Publisher and the Subscriber of one case of the suite: partitions stated by
// the Publisher (and by the Subscriber when subscriberStatesCount), keys taken from the payload
// when keyFromPayload, the Subscriber's config changed by tune unless nil.
func NewPubSub(t *testing.T, client redis.UniversalClient, partitions int, keyFromPayload, subscriberStatesCount bool, group string,
	tune func(*streamq.SubscriberConfig)) (message.Publisher, message.Subscriber) {
	pcfg := streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions, Trim: streamq.TrimConfig{MaxLen: -1}}
	if keyFromPayload {
		pcfg.Partitioning.PartitionKey = func(_ string, msg *message.Message) string { return string(msg.Payload) }
	}
	pub, err := streamq.NewPublisher(pcfg, Logger())
	require.NoError(t, err)
	scfg := FastSub(client, group)
	if subscriberStatesCount {
		scfg.DefaultPartitionCount = partitions
	}
	if tune != nil {
		tune(&scfg)
	}
	sub, err := streamq.NewSubscriber(scfg, Logger())
	require.NoError(t, err)
	return pub, sub
}
