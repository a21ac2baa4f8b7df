package admin_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// heldTopic is the back-pressure tests' topic: partition 0 holds 10 entries, partition 1
// holds 2, and groups "fast" and "slow" exist on both.
const heldTopic = "held"

// seedHeld creates heldTopic with meta (field, value pairs) in its metadata hash and returns
// partition 0's ids.
func seedHeld(e *opEnv, meta ...string) []string {
	e.t.Helper()
	e.create(heldTopic, 2)
	if len(meta) > 0 {
		require.NoError(e.t, e.client.HSet(e.ctx, e.space.Meta(heldTopic), meta).Err())
	}
	var ids []string
	for i := range 10 {
		ids = append(ids, e.xadd(heldTopic, 0, "*", "u"+strconv.Itoa(i)))
	}
	for i := range 2 {
		e.xadd(heldTopic, 1, "*", "v"+strconv.Itoa(i))
	}
	return ids
}

// groups creates the named groups at 0-0 on both partitions of heldTopic.
func (e *opEnv) groups(names ...string) {
	for _, g := range names {
		for p := range 2 {
			e.createGroup(heldTopic, p, g, "0-0")
		}
	}
}

// consume delivers count entries of partition 0 to group and acks the first acked of them.
func (e *opEnv) consume(group string, count, acked int) {
	e.t.Helper()
	ids := e.readGroup(heldTopic, 0, group, group+"-c", int64(count))
	require.Len(e.t, ids, count)
	if acked > 0 {
		require.NoError(e.t, e.client.XAck(e.ctx, e.space.PartitionStream(heldTopic, 0), group, ids[:acked]...).Err())
	}
}

// TestQueueInfoBackPressure: a partition over the topic's MaxLen names the group whose
// position stops the trim, from XINFO GROUPS and, for groups with pending entries, XPENDING.
func TestQueueInfoBackPressure(t *testing.T) {
	maxLen4 := []string{partition.FieldMaxLen, "4"}
	cases := []struct {
		name   string
		meta   []string
		seed   func(e *opEnv, ids []string)
		over   int64
		holder string
		needs  func(ids []string) string // nil: none
		held   int64                     // of over, what holder holds back
	}{
		{
			name: "a group that read nothing holds everything",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) { e.groups("fast", "slow"); e.consume("fast", 6, 6) },
			over: 6, holder: "slow", needs: func(ids []string) string { return ids[0] }, held: 6,
		},
		{
			name: "the oldest pending entry holds, not the last delivered",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 5, 5)
				e.consume("slow", 8, 1) // delivered up to ids[7], ids[1] on pending
			},
			over: 6, holder: "slow", needs: func(ids []string) string { return ids[1] }, held: 5,
		},
		{
			name: "the group with the lower position holds",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 7, 7)
				e.consume("slow", 3, 3)
			},
			over: 6, holder: "slow", needs: func(ids []string) string { return streamid.Next(ids[2]) }, held: 3,
		},
		{
			name: "a group fewer than MaxLen entries behind holds nothing back: the next trim removes what is over",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 10, 10)
				e.consume("slow", 8, 8)
			},
			over: 6,
		},
		{
			name: "a group MaxLen entries behind holds nothing back",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 10, 10)
				e.consume("slow", 6, 6)
			},
			over: 6,
		},
		{
			name: "pending entries are needed too: delivered everything, acked 3",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 10, 10)
				e.consume("slow", 10, 3)
			},
			over: 6, holder: "slow", needs: func(ids []string) string { return ids[3] }, held: 3,
		},
		{
			name: "lag unknown (XGROUP SETID): named from its position, holding back all that is over",
			meta: maxLen4,
			seed: func(e *opEnv, ids []string) {
				e.groups("fast", "slow")
				e.consume("fast", 10, 10)
				require.NoError(e.t, e.client.XGroupSetID(e.ctx, e.space.PartitionStream(heldTopic, 0), "slow", ids[7]).Err())
			},
			over: 6, holder: "slow", needs: func(ids []string) string { return streamid.Next(ids[7]) }, held: 6,
		},
		{
			name: "no groups: nothing holds, the next trim removes what is over",
			meta: maxLen4, seed: func(*opEnv, []string) {}, over: 6,
		},
		{
			name: "every group caught up: nothing holds",
			meta: maxLen4,
			seed: func(e *opEnv, _ []string) {
				e.groups("fast", "slow")
				e.consume("fast", 10, 10)
				e.consume("slow", 10, 10)
			},
			over: 6,
		},
		{
			name: "length retention off: nothing is over",
			meta: []string{partition.FieldMaxLen, "-1"},
			seed: func(e *opEnv, _ []string) { e.groups("fast", "slow"); e.consume("fast", 6, 6) },
		},
		{
			name: "within MaxLen: nothing is over, nobody holds",
			meta: []string{partition.FieldMaxLen, "20"},
			seed: func(e *opEnv, _ []string) { e.groups("fast", "slow"); e.consume("fast", 6, 6) },
		},
		{
			name: "hard policy: no position stops the trim, nothing holds",
			meta: []string{partition.FieldMaxLen, "4", partition.FieldTrimPolicy, "hard"},
			seed: func(e *opEnv, _ []string) { e.groups("fast", "slow"); e.consume("fast", 6, 6) },
			over: 6,
		},
		{
			name: "no recorded retention: the default MaxLen",
			seed: func(e *opEnv, _ []string) { e.groups("slow") },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newOpEnv(t)
			ids := seedHeld(e, c.meta...)
			c.seed(e, ids)

			q, err := e.adm.QueueInfo(e.ctx, heldTopic)
			require.NoError(t, err)
			require.Len(t, q.PerPartition, 2)
			p0, p1 := q.PerPartition[0], q.PerPartition[1]
			assert.Equal(t, c.over, p0.OverMaxLen)
			assert.Equal(t, c.holder, p0.Holder)
			assert.Equal(t, c.held, p0.HeldBack)
			if c.needs != nil {
				assert.Equal(t, c.needs(ids), p0.HolderNeeds)
			} else {
				assert.Empty(t, p0.HolderNeeds)
			}
			assert.Zero(t, p1.OverMaxLen, "2 entries are within any MaxLen here")
			assert.Empty(t, p1.Holder, "nothing over MaxLen: nothing held")
			assert.Equal(t, c.over, q.OverMaxLen, "summed")
			e.requireHoldsBack(c.holder, c.held)
		})
	}
}

// requireHoldsBack checks GroupStats of the groups "fast" and "slow" (where they exist):
// holder holds back held entries of partition 0, the other group none, and none of them
// anything on partition 1.
func (e *opEnv) requireHoldsBack(holder string, held int64) {
	e.t.Helper()
	for _, g := range []string{"fast", "slow"} {
		st, err := e.adm.GroupStats(e.ctx, heldTopic, g)
		if errors.Is(err, admin.ErrGroupNotFound) {
			continue
		}
		require.NoError(e.t, err)
		require.Len(e.t, st.Partitions, 2)
		want := map[bool]int64{true: held}[g == holder]
		assert.Equal(e.t, want, st.Partitions[0].HoldsBack, "group %q", g)
		assert.Zero(e.t, st.Partitions[1].HoldsBack, "group %q", g)
		assert.Equal(e.t, want, st.HoldsBack, "group %q, summed", g)
	}
}

func TestQueueInfoRetention(t *testing.T) {
	cases := []struct {
		name string
		meta []string
		want admin.LengthRetention
	}{
		{"none recorded", nil, admin.LengthRetention{MaxLen: admin.DefaultMaxLen, Policy: admin.TrimAcked}},
		{"recorded", []string{partition.FieldMaxLen, "4", partition.FieldExactLen, "0", partition.FieldTrimPolicy, "acked"},
			admin.LengthRetention{MaxLen: 4, Policy: admin.TrimAcked, Recorded: true}},
		{"exact, hard", []string{partition.FieldMaxLen, "50", partition.FieldExactLen, "1", partition.FieldTrimPolicy, "hard"},
			admin.LengthRetention{MaxLen: 50, Exact: true, Policy: admin.TrimHard, Recorded: true}},
		{"off", []string{partition.FieldMaxLen, "-1"}, admin.LengthRetention{MaxLen: -1, Policy: admin.TrimAcked, Recorded: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newOpEnv(t)
			seedHeld(e, c.meta...)
			q, err := e.adm.QueueInfo(e.ctx, heldTopic)
			require.NoError(t, err)
			assert.Equal(t, c.want, q.Retention)
		})
	}
}

// TestQueueInfoRecordsPublisherRetention: what a Publisher records is what QueueInfo reads.
func TestQueueInfoRecordsPublisherRetention(t *testing.T) {
	e := newOpEnv(t)
	pub := e.publisher(streamq.PublisherConfig{Trim: streamq.TrimConfig{MaxLen: 7, Exact: true, Policy: streamq.TrimHard}})
	require.NoError(t, pub.Publish("recorded", opMsg("x", -1)))
	q, err := e.adm.QueueInfo(e.ctx, "recorded")
	require.NoError(t, err)
	assert.Equal(t, admin.LengthRetention{MaxLen: 7, Exact: true, Policy: admin.TrimHard, Recorded: true}, q.Retention)
}

func TestDefaultsMatchTheLibrary(t *testing.T) {
	assert.Equal(t, string(streamq.TrimAcked), admin.TrimAcked)
	assert.Equal(t, string(streamq.TrimHard), admin.TrimHard)
}

// TestQueueInfoRoundTrips: the holders cost one round trip when a partition is over MaxLen
// (the group-seen records, so that an expired group is not named), and one more when a group
// has pending entries there (the XPENDING summaries, pipelined).
func TestQueueInfoRoundTrips(t *testing.T) {
	e := newOpEnv(t)
	seedHeld(e, partition.FieldMaxLen, "4")
	e.groups("fast", "slow")
	e.consume("fast", 6, 6)
	var trips atomic.Int64
	e.client.AddHook(countTrips{&trips})

	_, err := e.adm.QueueInfo(e.ctx, heldTopic)
	require.NoError(t, err)
	assert.Equal(t, int64(3), trips.Swap(0), "metadata, then one pipeline, the seen records")

	e.consume("slow", 2, 0)
	trips.Store(0)
	_, err = e.adm.QueueInfo(e.ctx, heldTopic)
	require.NoError(t, err)
	assert.Equal(t, int64(4), trips.Load(), "metadata, one pipeline, the XPENDING summaries, the seen records")
}

// countTrips counts commands and pipelines sent.
type countTrips struct{ n *atomic.Int64 }

func (c countTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c countTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c countTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

var _ redis.Hook = countTrips{}

// TestGroupStatsTrimLost runs a hard trim (the retention script the lease holders run) past
// a group that read nothing: GroupStats reports what it lost, in the same pipeline.
func TestGroupStatsTrimLost(t *testing.T) {
	e := newOpEnv(t)
	seedHeld(e)
	e.groups("fast", "slow")
	e.consume("fast", 10, 10)
	stream, lossKey := e.space.PartitionStream(heldTopic, 0), e.space.TrimLoss(heldTopic, 0)
	trimmed, err := retention.Trim(e.ctx, e.client, stream, lossKey, retention.Rule{MaxLen: 4, Exact: true, Hard: true})
	require.NoError(t, err)
	require.Equal(t, retention.Trimmed{Removed: 6, Unacked: 6}, trimmed)

	slow, err := e.adm.GroupStats(e.ctx, heldTopic, "slow")
	require.NoError(t, err)
	assert.Equal(t, int64(6), slow.Partitions[0].TrimLost)
	assert.Zero(t, slow.Partitions[1].TrimLost)
	assert.Equal(t, int64(6), slow.TrimLost)
	losses, err := retention.Losses(e.ctx, e.client, lossKey)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"slow": 6}, losses, "the count retention.Losses reads")

	fast, err := e.adm.GroupStats(e.ctx, heldTopic, "fast")
	require.NoError(t, err)
	assert.Zero(t, fast.TrimLost, "acked everything it lost nothing")
}
