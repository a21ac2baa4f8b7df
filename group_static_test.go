package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// staticGrace is the StaticMemberGrace of the in-process static members (at least
// streamqtest.FastSub's LeaseTTL, 5s). Their RebalanceInterval is 1s, so their presence
// window is 750ms: FastSub's 150ms would make it the shortest, 300ms, which a starved CI
// machine overruns (a lapsed presence stops every partition of the member).
const staticGrace = 5 * time.Second

func staticTweak(c *streamq.SubscriberConfig) {
	c.Membership.StaticMemberGrace, c.Membership.RebalanceInterval = staticGrace, time.Second
}

// publishSeq publishes count keyed messages over 48 keys and returns their UUIDs.
func publishSeq(t *testing.T, pub *streamq.Publisher, topic string, from, count int) []string {
	t.Helper()
	msgs := streamqtest.KeyedMessages(from, count, 48)
	require.NoError(t, pub.Publish(topic, msgs...))
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.UUID
	}
	return out
}

// TestStaticMemberTakesBackItsPartitionsAfterClose: member a of three static members on 12
// partitions closes (gracefully) and a new Subscriber with its name starts while messages
// keep coming: meanwhile b and c do not take a's partitions, the new process holds exactly
// a's partitions again, taken straight from the old process's parked leases, and every
// message is delivered exactly once (the Close flushed its acks).
func TestStaticMemberTakesBackItsPartitionsAfterClose(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const topic, group, n = "static-close", "g", 12
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: n})
		got := streamqtest.NewDeliveries()
		subs := map[string]*streamq.Subscriber{}
		for _, name := range []string{"a", "b", "c"} {
			sub, ch := streamqtest.SubscribeMember(t, client, topic, group, name, n, staticTweak)
			subs[name] = sub
			got.ConsumeInto(ch)
		}
		require.Eventually(t, func() bool {
			return streamqtest.Balanced(map[string]int{"a": 4, "b": 4, "c": 4})(streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, group, n)))
		}, 20*time.Second, 20*time.Millisecond)
		log := streamqtest.RecordLeases(t, client, topic, group, n)
		uuids := publishSeq(t, pub, topic, 0, 240)
		require.Eventually(t, func() bool { m, _ := got.Counts(uuids); return m == 0 }, 10*time.Second, 10*time.Millisecond)

		parts := log.OwnedBy("a", n)
		require.Len(t, parts, 4)
		old := log.InstanceOf(t, parts)
		require.NoError(t, subs["a"].Close())
		uuids = append(uuids, publishSeq(t, pub, topic, 240, 240)...) // a's wait for it
		streamqtest.WaitIdle(3 * time.Second)                         // three rebalance rounds of b and c

		_, ch := streamqtest.SubscribeMember(t, client, topic, group, "a", n, staticTweak)
		got.ConsumeInto(ch)
		require.Eventually(t, func() bool { return log.MovedOn(parts, "a", old) }, 10*time.Second, 5*time.Millisecond,
			"the new process holds a's partitions")
		assert.Equal(t, parts, log.OwnedBy("a", n), "and no other")
		log.AssertTakenBackDirectly(t, parts, "a", old)
		require.Eventually(t, func() bool { m, _ := got.Counts(uuids); return m == 0 }, 10*time.Second, 10*time.Millisecond)
		_, twice := got.Counts(uuids)
		assert.Zero(t, twice, "a graceful restart delivers nothing twice")
	})
}

// twoClientBackends runs test on a single redis-server and on a 3-master cluster, giving it
// a way to make clients of its own (separate pools, as two processes would have).
func twoClientBackends(t *testing.T, test func(t *testing.T, newClient func() redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		test(t, func() redis.UniversalClient { return srv.Client(t) })
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 0)
		test(t, func() redis.UniversalClient { return c.Client(t) })
	})
}

// TestStaticMemberNameInUse: a second Subscriber with the same static ConsumerName, on a
// client of its own, while the first one runs: its Subscribe returns ErrConsumerNameInUse
// and it never holds a partition (every lease keeps the first one's token); the first keeps
// delivering. Once the first one closed, the second subscribes and takes its partitions at
// once.
func TestStaticMemberNameInUse(t *testing.T) {
	t.Parallel()
	twoClientBackends(t, func(t *testing.T, newClient func() redis.UniversalClient) {
		const topic, group, n = "static-dup", "g", 4
		first := newClient()
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: first, DefaultPartitionCount: n})
		sub1, ch1 := streamqtest.SubscribeMember(t, first, topic, group, "dup", n, staticTweak)
		require.Eventually(t, func() bool {
			return streamqtest.CountByMember(streamqtest.LeaseOwners(t, first, topic, group, n))["dup"] == n
		},
			10*time.Second, 10*time.Millisecond)
		log := streamqtest.RecordLeases(t, first, topic, group, n)
		all := make([]int, n)
		for p := range all {
			all[p] = p
		}
		inst := log.InstanceOf(t, all)

		cfg := streamqtest.FastSub(newClient(), group)
		cfg.Membership.ConsumerName, cfg.DefaultPartitionCount = "dup", n
		staticTweak(&cfg)
		sub2 := streamqtest.NewSubscriber(t, cfg)
		_, err := sub2.Subscribe(context.Background(), topic)
		require.ErrorIs(t, err, streamq.ErrConsumerNameInUse)
		t.Logf("refused: %v", err)

		streamqtest.PublishKeyed(t, pub, topic, 0, 8, 8)
		for range 8 {
			streamqtest.ReceiveOne(t, ch1, 10*time.Second).Ack()
		}
		for p := range all {
			for _, c := range log.History(p) {
				assert.Equal(t, inst, streamqtest.TokenInstance(c.Token), "partition %d changed hands: %v", p, log.History(p))
			}
		}
		assert.Zero(t, sub2.Stats().Delivered)

		require.NoError(t, sub1.Close())
		ch2, err := sub2.Subscribe(context.Background(), topic)
		require.NoError(t, err, "the name is free once its process closed")
		streamqtest.PublishKeyed(t, pub, topic, 8, 9, 8)
		streamqtest.ReceiveOne(t, ch2, 10*time.Second).Ack()
		require.Eventually(t, func() bool { return log.MovedOn(all, "dup", inst) }, 10*time.Second, 5*time.Millisecond)
		log.AssertTakenBackDirectly(t, all, "dup", inst)
	})
}

// TestStaticMemberLeaveOnClose: a static member closed after LeaveOnClose hands its
// partitions over like any member: its leases are released when Close returns, the other
// member takes them, and its name is free at once.
func TestStaticMemberLeaveOnClose(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic, group, n = "static-leave", "g", 4
	a, _ := streamqtest.SubscribeMember(t, client, topic, group, "a", n, staticTweak)
	got := streamqtest.NewDeliveries()
	_, chB := streamqtest.SubscribeMember(t, client, topic, group, "b", n, staticTweak)
	got.ConsumeInto(chB)
	require.Eventually(t, func() bool {
		return streamqtest.Balanced(map[string]int{"a": 2, "b": 2})(streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, group, n)))
	}, 10*time.Second, 10*time.Millisecond)
	a.LeaveOnClose()
	require.NoError(t, a.Close())
	assert.NotContains(t, streamqtest.LeaseOwners(t, client, topic, group, n), "a", "a's leases were released, not kept for the grace")
	require.Eventually(t, func() bool {
		return streamqtest.CountByMember(streamqtest.LeaseOwners(t, client, topic, group, n))["b"] == n
	},
		10*time.Second, 10*time.Millisecond, "b takes a's partitions")
	c, err := member.NewInstance(client, keys.New("", "").MemberInstances(topic, group), "a", "other", time.Second, time.Minute).
		Claim(context.Background())
	require.NoError(t, err)
	assert.True(t, c.Taken, "the name is free")
}
