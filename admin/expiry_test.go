package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestGroupExpiryShown: a group registered and never consumed, with a 2s group expiry and a
// running group trimming to 5 entries: admin shows it expired (ConsumerGroups, GroupStats,
// GroupLiveness) with what it lost in TrimLost; the running group is not; once the group
// subscribes again it is live again.
func TestGroupExpiryShown(t *testing.T) {
	t.Parallel()
	onBackends(t, testGroupExpiryShown)
}

func expirySub(t *testing.T, client redis.UniversalClient, group string) *streamq.Subscriber {
	cfg := fastSub(client, group, 1)
	cfg.Retention.TrimInterval, cfg.Membership.PartitionRefreshInterval, cfg.Retention.GroupExpiry = 200*time.Millisecond, 100*time.Millisecond, 2*time.Second
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func testGroupExpiryShown(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic = "expired"
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	forgotten := expirySub(t, client, "forgotten")
	registered := time.Now()
	require.NoError(t, forgotten.SubscribeInitialize(topic))
	ch, err := expirySub(t, client, "live").Subscribe(ctx, topic)
	require.NoError(t, err)
	go func() {
		for m := range ch {
			m.Ack()
		}
	}()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Trim: streamq.TrimConfig{MaxLen: 5, Exact: true, GroupExpiry: 2 * time.Second}}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	for i := range 20 {
		require.NoError(t, pub.Publish(topic, heldMessage(i)))
	}

	byName := func() map[string]admin.GroupInfo {
		groups, err := adm.ConsumerGroups(ctx, topic)
		require.NoError(t, err)
		out := map[string]admin.GroupInfo{}
		for _, g := range groups {
			out[g.Name] = g
		}
		return out
	}
	if expired := byName()["forgotten"].Expired; time.Since(registered) < 2*time.Second {
		assert.False(t, expired, "not before the expiry") // unless a loaded machine took that long to get here
	}
	require.Eventually(t, func() bool { return byName()["forgotten"].Expired }, 20*time.Second, 50*time.Millisecond)
	groups := byName()
	assert.False(t, groups["live"].Expired)
	assert.WithinDuration(t, time.Now(), groups["live"].LastSeen, 5*time.Second, "the running group's lease holder records it")
	assert.False(t, groups["forgotten"].LastSeen.IsZero(), "seen from the first trim that found it registered")

	require.Eventually(t, func() bool {
		st, err := adm.GroupStats(ctx, topic, "forgotten")
		return err == nil && st.TrimLost == 15
	}, 20*time.Second, 50*time.Millisecond, "it lost the 15 entries trimmed to 5")
	st, err := adm.GroupStats(ctx, topic, "forgotten")
	require.NoError(t, err)
	assert.True(t, st.Expired)
	require.Len(t, st.Partitions, 1)
	assert.False(t, st.Partitions[0].ExpiredSince.IsZero())
	live, err := adm.GroupLiveness(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, live["forgotten"].ExpiredPartitions)
	assert.False(t, live["live"].Expired)

	back, err := forgotten.Subscribe(ctx, topic)
	require.NoError(t, err)
	for range 5 {
		select {
		case m := <-back:
			m.Ack()
		case <-time.After(10 * time.Second):
			t.Fatal("the group that came back got nothing")
		}
	}
	require.Eventually(t, func() bool { return !byName()["forgotten"].Expired }, 10*time.Second, 50*time.Millisecond,
		"live again once it holds the partition")
}

// An expired group holds nothing back: the partition over MaxLen names the live group whose
// position stops the trim, not the forgotten one that needs older entries.
func TestExpiredGroupHoldsNothingBack(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const topic = "held-by-live"
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, expirySub(t, client, "forgotten").SubscribeInitialize(topic))
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1, Trim: streamq.TrimConfig{MaxLen: 5, Exact: true, GroupExpiry: 2 * time.Second}}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	for i := range 20 {
		require.NoError(t, pub.Publish(topic, heldMessage(i)))
	}
	slow, err := expirySub(t, client, "slow").Subscribe(ctx, topic)
	require.NoError(t, err)
	select {
	case <-slow: // taken and never acked: "slow" needs the first entry from now on
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
	}
	holderOf := func() string {
		q, err := adm.QueueInfo(ctx, topic)
		require.NoError(t, err)
		require.Len(t, q.PerPartition, 1)
		return q.PerPartition[0].Holder
	}
	assert.Equal(t, "forgotten", holderOf(), "before its expiry the forgotten group needs the oldest entry")
	require.Eventually(t, func() bool { return holderOf() == "slow" }, 20*time.Second, 50*time.Millisecond,
		"once expired, the group that holds retention back is the live one")
}
