package admin_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// TestQueueInfoAndLag publishes 30 messages round-robin over 4 partitions (8, 8, 7, 7) and
// consumes 10 of them by hand (8 of partition 0, 2 of partition 1): the lag is what is left.
func TestQueueInfoAndLag(t *testing.T) {
	e := newOpEnv(t)
	const topic, n = "orders", 4
	e.create(topic, n)
	e.publishRoundRobin(topic, 30, n)
	require.NoError(t, e.client.XAdd(e.ctx, &redis.XAddArgs{Stream: e.space.DLQ(topic, 2), Values: []string{"raw", "1"}}).Err())

	info, err := e.adm.QueueInfo(e.ctx, topic)
	require.NoError(t, err)
	ids := make([][]string, n)
	for p := range n {
		ids[p] = e.ids(topic, p)
	}
	assert.Equal(t, int64(30), info.Length)
	assert.Equal(t, n, info.Partitions)
	assert.Equal(t, int64(1), info.DLQLength)
	assert.Equal(t, minFirst(ids), info.FirstID)
	assert.Equal(t, maxLast(ids), info.LastID)
	for p, pi := range info.PerPartition {
		assert.Equal(t, p, pi.Partition)
		assert.Equal(t, e.space.PartitionStream(topic, p), pi.Stream)
		assert.Equal(t, int64(len(ids[p])), pi.Length)
		assert.Equal(t, ids[p][0], pi.FirstID)
		assert.Equal(t, ids[p][len(ids[p])-1], pi.LastID)
	}
	assert.Equal(t, []int64{8, 8, 7, 7}, lengths(info))

	// Group "idle" exists everywhere and read nothing; "g" read 8 + 2.
	for p := range n {
		e.createGroup(topic, p, "idle", "0-0")
		e.createGroup(topic, p, "g", "0-0")
	}
	require.Len(t, e.readGroup(topic, 0, "g", "c1", 8), 8)
	require.Len(t, e.readGroup(topic, 1, "g", "c2", 2), 2)

	groups, err := e.adm.ConsumerGroups(e.ctx, topic)
	require.NoError(t, err)
	withoutAges(groups)
	// c1 and c2 are Redis consumers of no live member (no Subscriber heartbeats here).
	assert.Equal(t, []admin.GroupInfo{
		{Name: "g", Consumers: 0, RedisConsumers: 2, Pending: 10, Lag: 20},
		{Name: "idle", Consumers: 0, RedisConsumers: 0, Pending: 0, Lag: 30},
	}, groups)

	info, err = e.adm.QueueInfo(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, 2, info.Groups)

	st, err := e.adm.GroupStats(e.ctx, topic, "g")
	require.NoError(t, err)
	assert.Equal(t, int64(20), st.Lag)
	assert.Equal(t, int64(10), st.Pending)
	assert.Empty(t, st.Members)
	require.Len(t, st.Partitions, n)
	want := []struct {
		lag, pending, read int64
		delivered          string
	}{
		{0, 8, 8, ids[0][7]},
		{6, 2, 2, ids[1][1]},
		{7, 0, 0, "0-0"},
		{7, 0, 0, "0-0"},
	}
	var maxLag time.Duration
	for p, ps := range st.Partitions {
		w := want[p]
		assert.Equal(t, p, ps.Partition)
		assert.Equal(t, w.lag, ps.Lag, "partition %d", p)
		assert.True(t, ps.LagExact)
		assert.Equal(t, w.pending, ps.Pending)
		assert.Equal(t, w.read, ps.EntriesRead)
		assert.Equal(t, w.delivered, ps.LastDeliveredID)
		assert.Empty(t, ps.LeaseOwner)
		assert.Zero(t, ps.LeaseTTL)
		assert.Empty(t, ps.CommitFrontier)
		if w.lag > 0 { // the age of the first entry after the position
			next := ids[p][w.read]
			assert.Equal(t, next, ps.OldestID, "partition %d", p)
			assert.InDelta(t, time.Since(idMillis(t, next)).Seconds(), ps.TimeLag.Seconds(), 2, "partition %d", p)
		}
		maxLag = max(maxLag, ps.TimeLag)
	}
	assert.Zero(t, st.Partitions[0].TimeLag, "caught up")
	assert.Equal(t, maxLag, st.TimeLag)

	idle, err := e.adm.GroupStats(e.ctx, topic, "idle")
	require.NoError(t, err)
	for p, ps := range idle.Partitions {
		assert.Equal(t, int64(len(ids[p])), ps.Lag, "nothing consumed: lag is the length")
	}
}

// TestLagUnknownIsCounted deletes an entry after the group's position: Redis 7 then reports
// the lag as unknown and it is counted with XRANGE.
func TestLagUnknownIsCounted(t *testing.T) {
	e := newOpEnv(t)
	const topic = "holes"
	e.create(topic, 1)
	var ids []string
	for i := range 6 {
		ids = append(ids, e.xadd(topic, 0, "*", "u"+string(rune('a'+i))))
	}
	e.createGroup(topic, 0, "g", "0-0")
	require.Len(t, e.readGroup(topic, 0, "g", "c", 2), 2)
	require.NoError(t, e.client.XDel(e.ctx, e.space.PartitionStream(topic, 0), ids[3]).Err())
	raw, err := e.client.XInfoGroups(e.ctx, e.space.PartitionStream(topic, 0)).Result()
	require.NoError(t, err)
	require.Equal(t, int64(-1), raw[0].Lag, "Redis reports the lag unknown")

	st, err := e.adm.GroupStats(e.ctx, topic, "g")
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.Partitions[0].Lag)
	assert.True(t, st.Partitions[0].LagExact)
	groups, err := e.adm.ConsumerGroups(e.ctx, topic)
	require.NoError(t, err)
	withoutAges(groups)
	assert.Equal(t, []admin.GroupInfo{{Name: "g", RedisConsumers: 1, Pending: 2, Lag: 3}}, groups)
}

// TestGroupStatsLiveSubscriber runs a real Subscriber: it holds every lease and is a live
// member; once it closed (acks flushed, leases released) the commit frontier is each
// partition's last id.
func TestGroupStatsLiveSubscriber(t *testing.T) {
	e := newOpEnv(t)
	const topic, n, group = "live", 4, "workers"
	e.create(topic, n)
	e.publishRoundRobin(topic, 12, n)
	cfg := opSub(e, group)
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	seen := map[int]bool{}
	for range 12 {
		select {
		case m := <-ch:
			p, _ := streamq.PartitionFromCtx(m.Context())
			seen[p] = true
			m.Ack()
		case <-time.After(15 * time.Second):
			t.Fatal("messages not delivered")
		}
	}
	require.Len(t, seen, n, "the one member owns every partition")

	st, err := e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha"}, st.Members)
	require.Len(t, st.Heartbeats, 1)
	hb := st.Heartbeats[0]
	assert.Equal(t, "alpha", hb.Name)
	assert.True(t, hb.Live)
	assert.True(t, hb.Expires.After(st.Time) && !hb.Expires.After(st.Time.Add(cfg.Membership.LeaseTTL)), "expires within a TTL: %s at %s", hb.Expires, st.Time)
	require.Len(t, st.Partitions, n)
	for _, ps := range st.Partitions {
		assert.Equal(t, "alpha", ps.LeaseOwner, "partition %d", ps.Partition)
		assert.Greater(t, ps.LeaseTTL, time.Duration(0))
		assert.LessOrEqual(t, ps.LeaseTTL, cfg.Membership.LeaseTTL)
		assert.Equal(t, 1, ps.Consumers)
		assert.Zero(t, ps.Lag)
	}

	require.NoError(t, sub.Close())
	frontier, err := e.adm.CommitFrontier(e.ctx, topic, group)
	require.NoError(t, err)
	st, err = e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	assert.Empty(t, st.Members, "left the group")
	assert.Empty(t, st.Heartbeats, "a member that leaves is dropped at once")
	assert.Zero(t, st.Pending)
	for p := range n {
		ids := e.ids(topic, p)
		assert.Equal(t, ids[len(ids)-1], frontier[p], "partition %d", p)
		assert.Equal(t, frontier[p], st.Partitions[p].CommitFrontier)
		assert.Empty(t, st.Partitions[p].LeaseOwner, "released")
	}

	// A member that stopped without leaving stays in the membership, its heartbeat expired.
	gone := st.Time.Add(-time.Minute).Truncate(time.Millisecond)
	require.NoError(t, e.client.ZAdd(e.ctx, keys.New("", "").Members(topic, group), redis.Z{Member: "crashed", Score: float64(gone.UnixMilli())}).Err())
	st, err = e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	assert.Empty(t, st.Members)
	require.Len(t, st.Heartbeats, 1)
	assert.Equal(t, "crashed", st.Heartbeats[0].Name)
	assert.Equal(t, gone.UnixMilli(), st.Heartbeats[0].Expires.UnixMilli())
	assert.False(t, st.Heartbeats[0].Live)
}

func opSub(e *opEnv, group string) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:        e.client,
		ConsumerGroup: group,
		Membership:    streamq.MembershipConfig{ConsumerName: "alpha", LeaseTTL: 5 * time.Second, RenewInterval: time.Second, RebalanceInterval: 100 * time.Millisecond},
		Read:          streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:      streamq.DeliveryConfig{CloseTimeout: 5 * time.Second},
	}
}

// withoutAges zeroes the ages of groups (they depend on when the test ran).
func withoutAges(groups []admin.GroupInfo) {
	for i := range groups {
		groups[i].TimeLag, groups[i].PendingAge = 0, 0
	}
}

func lengths(info admin.QueueInfo) []int64 {
	out := make([]int64, len(info.PerPartition))
	for i, p := range info.PerPartition {
		out[i] = p.Length
	}
	return out
}

func minFirst(ids [][]string) string {
	best := ""
	for _, p := range ids {
		if len(p) > 0 && (best == "" || idBefore(p[0], best)) {
			best = p[0]
		}
	}
	return best
}

func maxLast(ids [][]string) string {
	best := ""
	for _, p := range ids {
		if len(p) > 0 && (best == "" || idBefore(best, p[len(p)-1])) {
			best = p[len(p)-1]
		}
	}
	return best
}

func idBefore(a, b string) bool {
	am, as, _ := cutID(a)
	bm, bs, _ := cutID(b)
	return am < bm || (am == bm && as < bs)
}

// TestLagReportedBehindIsChecked: Redis derives a group's lag from its entries-read counter,
// which can be left behind (after an AOF reload, or set so with XGROUP SETID ... ENTRIESREAD,
// as here). A group delivered up to the stream's last id then has no lag, and a lag above the
// stream's length is counted.
func TestLagReportedBehindIsChecked(t *testing.T) {
	e := newOpEnv(t)
	const topic = "behind"
	e.create(topic, 2)
	stream := func(p int) string { return e.space.PartitionStream(topic, p) }
	var ids [2][]string
	for p := range 2 {
		for i := range 20 {
			ids[p] = append(ids[p], e.xadd(topic, p, "*", "v"+strconv.Itoa(i)))
		}
	}
	// Partition 0: delivered up to its last id, but entries-read says 5.
	e.createGroup(topic, 0, "g", ids[0][19])
	require.NoError(t, e.client.Do(e.ctx, "XGROUP", "SETID", stream(0), "g", ids[0][19], "ENTRIESREAD", 5).Err())
	// Partition 1: trimmed to 10 entries, delivered up to the 15th: 5 left, entries-read 0.
	e.createGroup(topic, 1, "g", ids[1][14])
	require.NoError(t, e.client.XTrimMaxLen(e.ctx, stream(1), 10).Err())
	require.NoError(t, e.client.Do(e.ctx, "XGROUP", "SETID", stream(1), "g", ids[1][14], "ENTRIESREAD", 0).Err())
	for p, want := range []int64{15, 20} {
		raw, err := e.client.XInfoGroups(e.ctx, stream(p)).Result()
		require.NoError(t, err)
		require.Equal(t, want, raw[0].Lag, "Redis reports partition %d's lag from the counter", p)
	}

	st, err := e.adm.GroupStats(e.ctx, topic, "g")
	require.NoError(t, err)
	require.Len(t, st.Partitions, 2)
	assert.Zero(t, st.Partitions[0].Lag, "caught up")
	assert.Equal(t, int64(5), st.Partitions[1].Lag, "counted")
	assert.True(t, st.Partitions[1].LagExact)
	groups, err := e.adm.ConsumerGroups(e.ctx, topic)
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, int64(5), groups[0].Lag)
	counters, err := e.adm.TopicCounters(e.ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(5), counters.Groups["g"].Lag)
}
