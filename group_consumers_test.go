package streamq_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// consumerNames lists the Redis consumers of group on stream.
func consumerNames(t *testing.T, client redis.UniversalClient, str, group string) []string {
	t.Helper()
	cs, err := client.XInfoConsumers(context.Background(), str, group).Result()
	require.NoError(t, err)
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	sort.Strings(names)
	return names
}

// TestConsumersOfMembersThatLeftAreRemoved: after 5 restarts of a member with a generated
// name, the group keeps one Redis consumer per live member.
func TestConsumersOfMembersThatLeftAreRemoved(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testConsumersOfMembersThatLeftAreRemoved)
}

func testConsumersOfMembersThatLeftAreRemoved(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const topic = "restarts"
	str := keys.New("", "").PartitionStream(topic, 0)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retention.TrimInterval = 200 * time.Millisecond
	for i := 0; i < 5; i++ {
		require.NoError(t, pub.Publish(topic, seqMessages(i, 1, nil)...))
		consumeAndClose(t, streamqtest.NewSubscriber(t, cfg), topic, 1, true) // a new random name each time
	}
	// One consumer is left behind per restart, unless a later restart's member removed it
	// already (a member that left LeaseTTL ago: a slow machine gets there before the loop ends).
	require.NotEmpty(t, consumerNames(t, client, str, "g"), "consumers left behind by the restarts")

	last := streamqtest.NewSubscriber(t, cfg)
	ch, err := last.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	ackAll(ch)
	require.Eventually(t, func() bool {
		names := consumerNames(t, client, str, "g")
		return len(names) == 1 && names[0] == streamq.SubscriberConfigOf(last).Membership.ConsumerName
	}, 15*time.Second, 100*time.Millisecond, "consumers: %v", consumerNames(t, client, str, "g"))
}
