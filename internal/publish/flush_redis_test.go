package publish

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/script"
)

// park is a delayed message's parking in partition p's delay set, due at due.
func park(t *testing.T, p part, id string, due time.Time) Write {
	t.Helper()
	item, err := retry.NewItem(retry.Origin{Topic: "t", Partition: p.p, MaxRetries: -1}, map[string]any{"uuid": id, "payload": "later"})
	require.NoError(t, err)
	return Write{Partition: p.p, Park: &retry.Park{ZSet: space.Delay("t", p.p), Items: space.DelayItems("t", p.p),
		ID: id, Due: due, Item: item}}
}

// TestFlushPlainAppendsInOrder: plain appends of several calls go in one Flush, each call
// gets one result per write with the id of its entry, and each partition's entries are in
// the calls' order.
func TestFlushPlainAppendsInOrder(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	p0, p1 := partOf(0), partOf(1)
	a := &Call{Writes: []Write{p0.xadd("a1", "x"), p1.xadd("a2", "x"), p0.xadd("a3", "x")}}
	b := &Call{Writes: []Write{p1.xadd("b1", "x"), p0.xadd("b2", "x")}}
	acked, err := Flush(context.Background(), client, []*Call{a, b}, Replicas{}, nil)
	require.NoError(t, err)
	assert.Zero(t, acked, "no WAIT")
	require.Len(t, a.Results, 3)
	require.Len(t, b.Results, 2)
	requireOK(t, a.Results)
	requireOK(t, b.Results)
	assert.Equal(t, []bool{false, false, false}, dups(a.Results), "plain appends are never duplicates")

	m0, m1 := entries(t, client, p0.stream), entries(t, client, p1.stream)
	assert.Equal(t, []string{"a1", "a3", "b2"}, uuidsOf(m0))
	assert.Equal(t, []string{"a2", "b1"}, uuidsOf(m1))
	assert.Equal(t, []string{a.Results[0].StreamID(), a.Results[2].StreamID(), b.Results[1].StreamID()}, idsOf(m0))
	assert.Equal(t, []string{a.Results[1].StreamID(), b.Results[0].StreamID()}, idsOf(m1))

	again := flush(t, client, p0.xadd("a1", "x"))
	requireOK(t, again)
	assert.False(t, again[0].Duplicate())
	assert.Len(t, entries(t, client, p0.stream), 4, "without Once the same UUID appends again")
}

// TestFlushMixedWrites: one call that parks delayed messages, appends plainly, offloads and
// appends idempotently: each write gets its own result, a parking (with Once set too) has no
// stream id and records no UUID, and the appends land in the stream.
func TestFlushMixedWrites(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	require.NoError(t, retry.LoadScripts(ctx, client))
	p := partOf(0)
	due := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	parkOnce := park(t, p, "item-2", due)
	parkOnce.Once = p.onceOf("parked", window)
	res := flush(t, client,
		park(t, p, "item-1", due),
		p.xadd("plain", "x"),
		p.offload("off", "ref-1", "big", 0),
		parkOnce,
		p.once("once", "x", window),
	)
	requireOK(t, res)
	assert.Equal(t, []bool{false, false, false, false, false}, dups(res))
	assert.Empty(t, res[0].StreamID(), "a parked message has no entry yet")
	assert.Empty(t, res[3].StreamID())

	score, err := client.ZMScore(ctx, space.Delay("t", 0), "item-1", "item-2").Result()
	require.NoError(t, err)
	assert.Equal(t, []float64{float64(due.UnixMilli()), float64(due.UnixMilli())}, score)
	assert.Equal(t, int64(2), client.HLen(ctx, space.DelayItems("t", 0)).Val())

	msgs := entries(t, client, p.stream)
	assert.Equal(t, []string{"plain", "off", "once"}, uuidsOf(msgs))
	assert.Equal(t, []string{res[1].StreamID(), res[2].StreamID(), res[4].StreamID()}, idsOf(msgs))
	assert.Equal(t, "ref-1", msgs[1].Values["x-payload-hash-ref"])
	bs := buckets(t, client, p.prefix)
	require.Len(t, bs, 1)
	recorded, err := client.HKeys(ctx, keys.IdempotencyBucket(p.prefix, bs[0])).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"once"}, recorded, "the parked message's UUID is not recorded")
}

// TestFlushOffloadRetryAppendsNothing: an offloaded append (no Once) sent again with the
// same payload key, as a retry after a lost reply sends it, appends no second entry: its
// result has no error and no stream id.
func TestFlushOffloadRetryAppendsNothing(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	p := partOf(0)
	w := p.offload("u", "ref", "body", time.Minute)
	first := flush(t, client, w)
	requireOK(t, first)
	require.NotEmpty(t, first[0].StreamID())

	again := flush(t, client, w)
	requireOK(t, again)
	assert.Empty(t, again[0].StreamID(), "the offload ran before")
	assert.False(t, again[0].Duplicate())
	assert.Equal(t, []string{first[0].StreamID()}, idsOf(entries(t, client, p.stream)))
}

// TestFlushNoScript: on a server whose script cache is empty the idempotent appends fail with
// NOSCRIPT (script.IsNoScript) and append nothing, while the plain appends of the same
// pipeline succeed; once the script is loaded the same writes go through.
func TestFlushNoScript(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	require.NoError(t, client.ScriptFlush(ctx).Err())
	p0, p1 := partOf(0), partOf(1)
	onceWrites := []Write{p0.once("u1", "x", window), p1.once("u2", "x", window)}
	res := flush(t, client, p0.xadd("plain", "x"), onceWrites[0], onceWrites[1])
	require.NoError(t, res[0].Err())
	assert.NotEmpty(t, res[0].StreamID())
	for _, r := range res[1:] {
		require.Error(t, r.Err())
		assert.True(t, script.IsNoScript(r.Err()), "%v", r.Err())
		assert.Empty(t, r.StreamID())
		assert.False(t, r.Duplicate())
	}
	assert.Equal(t, []string{"plain"}, uuidsOf(entries(t, client, p0.stream)))
	assert.Empty(t, entries(t, client, p1.stream))
	assert.Empty(t, buckets(t, client, p0.prefix))

	require.NoError(t, LoadScripts(ctx, client))
	again := flush(t, client, onceWrites...)
	requireOK(t, again)
	assert.Equal(t, []bool{false, false}, dups(again), "nothing was recorded by the refused calls")
	assert.Equal(t, []string{"plain", "u1"}, uuidsOf(entries(t, client, p0.stream)))
	assert.Equal(t, []string{"u2"}, uuidsOf(entries(t, client, p1.stream)))
}

// TestFlushWaitReplicas: with Replicas.N the pipeline ends with a WAIT whose count Flush
// returns: 0 (and no error) on its timeout without a replica, 1 with one in sync; the writes
// are applied either way.
func TestFlushWaitReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	p := partOf(0)
	send := func(uuid string, timeout time.Duration) (int, []Result) {
		c := &Call{Writes: []Write{p.xadd(uuid, "x")}}
		acked, err := Flush(ctx, client, []*Call{c}, Replicas{N: 1, Timeout: timeout}, nil)
		require.NoError(t, err)
		requireOK(t, c.Results)
		return acked, c.Results
	}
	acked, _ := send("alone", 20*time.Millisecond)
	assert.Zero(t, acked, "no replica")

	replica := redistest.StartReplica(t, srv).Client(t)
	acked, res := send("replicated", 10*time.Second) // WAIT answers once the replica acked
	assert.Equal(t, 1, acked)
	got, err := replica.XRange(ctx, p.stream, res[0].StreamID(), res[0].StreamID()).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"replicated"}, uuidsOf(got), "on the replica when WAIT counted it")
	assert.Equal(t, []string{"alone", "replicated"}, uuidsOf(entries(t, client, p.stream)))
}

// TestFlushCanceledContext: a pipeline that cannot be sent (its context is canceled) ends
// with a failed WAIT: Flush returns that error, and every write's result carries it too.
func TestFlushCanceledContext(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &Call{Writes: []Write{partOf(0).xadd("u", "x")}}
	_, err := Flush(ctx, client, []*Call{c}, Replicas{N: 1, Timeout: time.Millisecond}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, c.Results, 1)
	assert.ErrorIs(t, c.Results[0].Err(), context.Canceled)
}
