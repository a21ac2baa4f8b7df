package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestAckPolicyDeletesEntries(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testAckPolicyDeletesEntries)
}

func testAckPolicyDeletesEntries(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const ackSetTTL = 30 * time.Second
	cases := []struct {
		name   string
		policy streamq.AckDeletePolicy
		// secondGroup: a group g2 exists on the stream (subscribed once, then closed) and
		// acks after g1.
		secondGroup bool
		// lenAfterG1 is XLEN once g1 acked.
		lenAfterG1 int64
		ackSet     bool // an ack set holding g1 exists once g1 acked
	}{
		{name: "none", policy: streamq.AckDeleteNone, lenAfterG1: 1},
		{name: "immediate", policy: streamq.AckDeleteImmediate, lenAfterG1: 0},
		{name: "all-groups-ack", policy: streamq.AckDeleteAllGroups, secondGroup: true, lenAfterG1: 1, ackSet: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			space := keys.New("", "")
			topic := "policy-" + tc.name
			str := space.PartitionStream(topic, 0)
			cfg := func(group string) streamq.SubscriberConfig {
				c := streamqtest.FastSub(client, group)
				c.Acks.DeletePolicy = tc.policy
				c.Acks.SetTTL = ackSetTTL
				return c
			}
			if tc.secondGroup {
				g2 := streamqtest.NewSubscriber(t, cfg("g2"))
				_, err := g2.Subscribe(ctx, topic)
				require.NoError(t, err)
				require.NoError(t, g2.Close())
			}
			g1 := streamqtest.NewSubscriber(t, cfg("g1"))
			ch1, err := g1.Subscribe(ctx, topic)
			require.NoError(t, err)
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
			require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
			id := onlyEntry(t, client, str).ID
			ackSet := space.Acks(topic, 0, id)

			nextMsg(t, ch1, 10*time.Second).Ack()
			// The frontier moves in the same script that applies the policy.
			waitCommit(t, client, topic, 0, "g1", id)
			assert.Equal(t, int64(0), streamqtest.GroupPending(t, client, str, "g1"))
			assert.Equal(t, tc.lenAfterG1, streamqtest.XLen(t, client, str), "XLEN after g1 acked")
			if !tc.ackSet {
				assert.False(t, keyExists(t, client, ackSet), "policy %s keeps no ack set", tc.policy)
				return
			}
			members, err := client.SMembers(ctx, ackSet).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{"g1"}, members)
			ttl, err := client.PTTL(ctx, ackSet).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "the ack set must expire")
			assert.LessOrEqual(t, ttl, ackSetTTL)

			g2 := streamqtest.NewSubscriber(t, cfg("g2"))
			ch2, err := g2.Subscribe(ctx, topic)
			require.NoError(t, err)
			nextMsg(t, ch2, 10*time.Second).Ack()
			waitCommit(t, client, topic, 0, "g2", id)
			assert.Equal(t, int64(0), streamqtest.XLen(t, client, str), "the entry is deleted once every group acked")
			assert.False(t, keyExists(t, client, ackSet), "the ack set is deleted with the entry")
		})
	}
}

func TestCommitFrontierFollowsAcksPerGroup(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testCommitFrontierFollowsAcksPerGroup)
}

func testCommitFrontierFollowsAcksPerGroup(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "frontier"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	g1 := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g1"))
	ch1, err := g1.Subscribe(ctx, topic)
	require.NoError(t, err)
	streamqtest.PublishKeyed(t, pub, topic, 0, 10, 1)
	entries := streamEntries(t, client, space.PartitionStream(topic, 0))
	require.Len(t, entries, 10)
	last := entries[9].ID
	for i := 0; i < 10; i++ {
		m := nextMsg(t, ch1, 10*time.Second)
		id, _ := streamq.StreamIDFromCtx(m.Context())
		require.Equal(t, entries[i].ID, id, "delivered in order")
		m.Ack()
	}
	waitCommit(t, client, topic, 0, "g1", last)
	assert.Equal(t, "", commitOf(t, client, topic, 0, "g2"))

	g2 := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g2"))
	ch2, err := g2.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		nextMsg(t, ch2, 10*time.Second).Ack()
	}
	waitCommit(t, client, topic, 0, "g2", last)
	all, err := client.HGetAll(ctx, space.Commit(topic, 0)).Result()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"g1": last, "g2": last}, all)
}
