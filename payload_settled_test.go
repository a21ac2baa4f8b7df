package streamq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestSettledEntriesFinishTheirBookkeeping: an entry that a retry or a dead letter settles
// (acked by the retry or dead-letter script, not by the ack batch) still counts its group as
// done with it: its offloaded payload goes once every group is, and AckDeleteAllGroups
// deletes it. Each case has two groups, one of which acks at once.
func TestSettledEntriesFinishTheirBookkeeping(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testSettledEntriesFinishTheirBookkeeping)
}

func testSettledEntriesFinishTheirBookkeeping(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	cases := []struct {
		name   string
		policy streamq.AckDeletePolicy
		retry  streamq.RetryPolicy
		nacks  int  // how many times the failing group nacks the message before it acks
		dead   bool // the failing group dead-letters it instead
	}{
		{name: "retried at once", policy: streamq.AckDeleteNone, retry: streamq.ExponentialBackoff{Attempts: -1}, nacks: 1},
		{name: "retried after a backoff", policy: streamq.AckDeleteNone, retry: streamq.ExponentialBackoff{Attempts: 3, Base: 50 * time.Millisecond, Max: 50 * time.Millisecond}, nacks: 1},
		{name: "dead-lettered", policy: streamq.AckDeleteNone, retry: streamq.ExponentialBackoff{Attempts: -1}, dead: true},
		{name: "retried, all-groups-ack", policy: streamq.AckDeleteAllGroups, retry: streamq.ExponentialBackoff{Attempts: -1}, nacks: 2},
		{name: "dead-lettered, all-groups-ack", policy: streamq.AckDeleteAllGroups, retry: streamq.ExponentialBackoff{Attempts: -1}, dead: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := "settled-" + strconv.Itoa(i)
			space := keys.New("", "")
			stream, index := space.PartitionStream(topic, 0), space.PayloadIndex(topic, 0)
			ok := streamqtest.NewSubscriber(t, withPolicy(streamqtest.FastSub(client, "ok"), tc.policy, tc.retry))
			okCh, err := ok.Subscribe(context.Background(), topic)
			require.NoError(t, err)
			failing := streamqtest.NewSubscriber(t, withPolicy(streamqtest.FastSub(client, "failing"), tc.policy, tc.retry))
			failCh, err := failing.Subscribe(context.Background(), topic)
			require.NoError(t, err)
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
			sent := bigMessage(t)
			require.NoError(t, pub.Publish(topic, sent))
			original := onlyEntry(t, client, stream).ID
			require.NotZero(t, zcardOf(t, client, index), "the payload is offloaded and indexed")

			nextMsg(t, okCh, 10*time.Second).Ack()
			for n := 0; ; n++ {
				m := nextMsg(t, failCh, 10*time.Second)
				assert.Equal(t, sent.UUID, m.UUID)
				if tc.dead {
					_ = streamq.DeadLetter(m, nil) // marks m; its error is for a handler to return
					m.Nack()
					break
				}
				if n == tc.nacks {
					m.Ack()
					break
				}
				m.Nack()
			}
			require.Eventually(t, func() bool { return zcardOf(t, client, index) == 0 }, 10*time.Second, 10*time.Millisecond,
				"the offloaded payload outlives every group being done with the message")
			assert.False(t, keyExists(t, client, space.Acks(topic, 0, original)), "the ack set is gone too")
			if tc.policy == streamq.AckDeleteAllGroups {
				require.Eventually(t, func() bool {
					return len(client.XRange(context.Background(), stream, original, original).Val()) == 0
				}, 10*time.Second, 10*time.Millisecond, "all-groups-ack keeps the settled entry")
			}
		})
	}
}

func withPolicy(cfg streamq.SubscriberConfig, policy streamq.AckDeletePolicy, retry streamq.RetryPolicy) streamq.SubscriberConfig {
	cfg.Acks.DeletePolicy, cfg.Retry.Policy = policy, retry
	return cfg
}

func zcardOf(t testing.TB, client redis.UniversalClient, key string) int64 {
	t.Helper()
	n, err := client.ZCard(context.Background(), key).Result()
	require.NoError(t, err)
	return n
}
