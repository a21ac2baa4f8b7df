package publish

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// producerKey is the key of producer's record of p's group: keys.Space.Producers of the
// group's first partition + ":" + producer.
func (p part) producerKey(producer string) string {
	return space.Producers("t", p.p-p.p%p.group) + ":" + producer
}

// seqOf is the sequencing of an append of producer's number n (0: for a Sequencer to give)
// to the partition, within the default window.
func (p part) seqOf(producer string, n uint64) *Sequenced {
	return &Sequenced{Record: space.Producers("t", p.p-p.p%p.group), Name: strconv.Itoa(p.p), Index: p.index, Producer: producer, Seq: n, Window: window}
}

// seq is a sequenced inline append of a message with uuid: producer's number n.
func (p part) seq(uuid, producer string, n uint64) Write {
	w := p.xadd(uuid, "body-"+uuid)
	w.Seq = p.seqOf(producer, n)
	return w
}

// seqOffload is a sequenced offloaded append of body under ref, kept ttl: producer's number n.
func (p part) seqOffload(uuid, ref, body string, ttl time.Duration, producer string, n uint64) Write {
	w := p.offload(uuid, ref, body, ttl)
	w.Seq = p.seqOf(producer, n)
	return w
}

// seqWrites is producer's sequenced appends numbered from..to to p, their uuids "<producer>-<n>".
func seqWrites(p part, producer string, from, to uint64) []Write {
	var out []Write
	for n := from; n <= to; n++ {
		out = append(out, p.seq(fmt.Sprintf("%s-%d", producer, n), producer, n))
	}
	return out
}

// seqUUIDs are the uuids of seqWrites's writes of producer for the numbers ns.
func seqUUIDs(producer string, ns ...uint64) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("%s-%d", producer, n)
	}
	return out
}

// state is what producer's record holds for p: "last a-b c-d", "" when it holds nothing
// for p (or does not exist).
func (p part) state(t *testing.T, rdb redis.Cmdable, producer string) string {
	t.Helper()
	key := p.producerKey(producer)
	v, err := rdb.Get(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err, key)
	for entry := range strings.SplitSeq(v, ",") {
		if rest, ok := strings.CutPrefix(entry, strconv.Itoa(p.p)+":"); ok {
			return rest
		}
	}
	return ""
}

// requireAppended fails unless every result is an append (no error, not a duplicate, an id).
func requireAppended(t *testing.T, results []Result) {
	t.Helper()
	for i, r := range results {
		require.NoError(t, r.Err(), "write %d", i)
		require.False(t, r.Duplicate(), "write %d", i)
		require.NotEmpty(t, r.StreamID(), "write %d", i)
	}
}

// requireDuplicates fails unless every result is a Seq duplicate: no error, no id.
func requireDuplicates(t *testing.T, results []Result) {
	t.Helper()
	for i, r := range results {
		require.NoError(t, r.Err(), "write %d", i)
		require.True(t, r.Duplicate(), "write %d", i)
		require.Empty(t, r.StreamID(), "write %d: a Seq duplicate names no entry", i)
	}
}

// TestAppendSeqInOrder: a producer's numbers 1..n are appended in order, each result naming
// its entry; the producer key reads "n" (no gap) and expires a window after the append.
func TestAppendSeqInOrder(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	const n = 5
	res := flush(t, client, seqWrites(p, "a", 1, n)...)
	requireAppended(t, res)

	msgs := entries(t, client, p.stream)
	assert.Equal(t, seqUUIDs("a", 1, 2, 3, 4, 5), uuidsOf(msgs), "in the numbers' order")
	assert.Equal(t, ids(res), idsOf(msgs), "each result names its entry")
	assert.Equal(t, "body-a-3", msgs[2].Values["payload"], "the entry's fields")

	key := p.producerKey("a")
	assert.Equal(t, "5", p.state(t, client, "a"))
	ttl, err := client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0), "the key expires")
	assert.LessOrEqual(t, ttl, window, "a window after the append")
	assert.Greater(t, ttl, window-time.Minute, "about a window")
	assert.Zero(t, client.Exists(ctx, p.index).Val(), "no payload index for inline messages")
	assert.Zero(t, client.Exists(ctx, p.producerKey("b")).Val(), "only the producer's own key")
}

// TestAppendSeqSentAgain: the same call sent again (same Producer and Seq values) appends
// nothing: every result is a duplicate without a stream id or an error, and the producer key
// is unchanged. A number repeated within one call is a duplicate too.
func TestAppendSeqSentAgain(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	writes := seqWrites(p, "a", 1, 3)
	first := flush(t, client, writes...)
	requireAppended(t, first)

	again := flush(t, client, writes...)
	requireDuplicates(t, again)
	msgs := entries(t, client, p.stream)
	assert.Equal(t, seqUUIDs("a", 1, 2, 3), uuidsOf(msgs), "appended once")
	assert.Equal(t, ids(first), idsOf(msgs))
	assert.Equal(t, "3", p.state(t, client, "a"))

	mixed := flush(t, client, p.seq("a-4", "a", 4), p.seq("a-2", "a", 2), p.seq("a-4", "a", 4), p.seq("a-5", "a", 5))
	requireOK(t, mixed)
	assert.Equal(t, []bool{false, true, true, false}, dups(mixed))
	assert.Equal(t, []string{mixed[0].StreamID(), "", "", mixed[3].StreamID()}, ids(mixed))
	assert.Equal(t, seqUUIDs("a", 1, 2, 3, 4, 5), uuidsOf(entries(t, client, p.stream)))
	assert.Equal(t, "5", p.state(t, client, "a"))
}

// TestAppendSeqGapFilled: numbers a failed send skipped (4 and 5) are a gap in the producer
// key; sending them later appends them and takes them out of the gap, and a number filled
// once is a duplicate afterwards.
func TestAppendSeqGapFilled(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	requireAppended(t, flush(t, client, seqWrites(p, "a", 1, 3)...))
	requireAppended(t, flush(t, client, seqWrites(p, "a", 6, 7)...))
	assert.Equal(t, "7 4-5", p.state(t, client, "a"))

	requireAppended(t, flush(t, client, seqWrites(p, "a", 5, 5)...))
	assert.Equal(t, "7 4-4", p.state(t, client, "a"))
	requireAppended(t, flush(t, client, seqWrites(p, "a", 4, 4)...))
	assert.Equal(t, "7", p.state(t, client, "a"), "no gap left")
	requireDuplicates(t, flush(t, client, seqWrites(p, "a", 4, 4)...))
	requireDuplicates(t, flush(t, client, seqWrites(p, "a", 6, 6)...))
	assert.Equal(t, "7", p.state(t, client, "a"))

	assert.Equal(t, seqUUIDs("a", 1, 2, 3, 6, 7, 5, 4), uuidsOf(entries(t, client, p.stream)),
		"each number once, in the order appended")
}

// TestAppendSeqUnknownProducer: a producer whose key is gone (forgotten after its window)
// sending number 100 is appended, and the numbers below it count as a gap (they may be sends
// again of messages it forgot): 50 is appended and splits it.
func TestAppendSeqUnknownProducer(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	requireAppended(t, flush(t, client, p.seq("m100", "old", 100)))
	assert.Equal(t, "100 1-99", p.state(t, client, "old"))

	requireAppended(t, flush(t, client, p.seq("m50", "old", 50)))
	assert.Equal(t, "100 1-49 51-99", p.state(t, client, "old"))
	requireDuplicates(t, flush(t, client, p.seq("m50", "old", 50), p.seq("m100", "old", 100)))
	assert.Equal(t, []string{"m100", "m50"}, uuidsOf(entries(t, client, p.stream)))

	t.Run("forgotten", func(t *testing.T) {
		q := partOf(1)
		requireAppended(t, flush(t, client, seqWrites(q, "a", 1, 3)...))
		require.NoError(t, client.Del(context.Background(), q.producerKey("a")).Err()) // its window passed
		again := flush(t, client, seqWrites(q, "a", 3, 4)...)
		requireAppended(t, again) // 3 again: a duplicate entry, never a loss
		assert.Equal(t, "4 1-2", q.state(t, client, "a"))
		assert.Equal(t, seqUUIDs("a", 1, 2, 3, 3, 4), uuidsOf(entries(t, client, q.stream)))
	})
}

// gapsOf is the producer key value "last a-a b-b ..." of single-number gaps.
func gapsOf(last uint64, gaps ...uint64) string {
	parts := []string{fmt.Sprint(last)}
	for _, g := range gaps {
		parts = append(parts, fmt.Sprintf("%d-%d", g, g))
	}
	return strings.Join(parts, " ")
}

// odds are the odd numbers from..to.
func odds(from, to uint64) []uint64 {
	var out []uint64
	for n := from; n <= to; n += 2 {
		out = append(out, n)
	}
	return out
}

// TestAppendSeqGapsBounded: a producer key holds at most 16 gaps: a 17th merges the two
// lowest, and the numbers between them count as not appended. A number of the merged range
// that was appended earlier is appended again (a duplicate, never a loss), a number that was
// skipped is appended once, and a number at or below last outside every gap is a duplicate.
func TestAppendSeqGapsBounded(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	var evens []Write
	for n := uint64(2); n <= 32; n += 2 {
		evens = append(evens, p.seq(fmt.Sprint("m", n), "a", n))
	}
	requireAppended(t, flush(t, client, evens...))
	assert.Equal(t, gapsOf(32, odds(1, 31)...), p.state(t, client, "a"), "16 gaps: 1, 3, ..., 31")

	requireAppended(t, flush(t, client, p.seq("m34", "a", 34)))
	want := "34 1-3 " + strings.TrimPrefix(gapsOf(0, odds(5, 33)...), "0 ")
	assert.Equal(t, want, p.state(t, client, "a"), "the 17th gap merged the two lowest: 1-3")
	assert.Len(t, strings.Fields(p.state(t, client, "a")), 1+16)

	again := flush(t, client, p.seq("m2", "a", 2))
	requireAppended(t, again) // in the merged range: appended again, not lost
	assert.Equal(t, want, p.state(t, client, "a"), "filling 2 makes 17 gaps: merged again")

	requireDuplicates(t, flush(t, client, p.seq("m4", "a", 4), p.seq("m32", "a", 32), p.seq("m34", "a", 34)))

	requireAppended(t, flush(t, client, p.seq("m3", "a", 3)))
	assert.Equal(t, "34 1-2 "+strings.TrimPrefix(gapsOf(0, odds(5, 33)...), "0 "), p.state(t, client, "a"))
	requireAppended(t, flush(t, client, p.seq("m5", "a", 5)))
	assert.Equal(t, "34 1-2 "+strings.TrimPrefix(gapsOf(0, odds(7, 33)...), "0 "), p.state(t, client, "a"))
	requireDuplicates(t, flush(t, client, p.seq("m3", "a", 3), p.seq("m5", "a", 5)))

	var wantUUIDs []string
	for n := 2; n <= 34; n += 2 {
		wantUUIDs = append(wantUUIDs, fmt.Sprint("m", n))
	}
	wantUUIDs = append(wantUUIDs, "m2", "m3", "m5")
	assert.Equal(t, wantUUIDs, uuidsOf(entries(t, client, p.stream)))
}

// TestAppendSeqTwoProducers: two producers' appends to one partition, interleaved in one
// pipeline (two calls), each number their own: each has its own key, the entries are in the
// writes' order, and each producer's numbers are duplicates only for itself.
func TestAppendSeqTwoProducers(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	c1 := &Call{Writes: []Write{p.seq("a1", "a", 1), p.seq("b1", "b", 1), p.seq("a2", "a", 2)}}
	c2 := &Call{Writes: []Write{p.seq("b2", "b", 2), p.seq("b3", "b", 3), p.seq("a3", "a", 3)}}
	acked, err := Flush(context.Background(), client, []*Call{c1, c2}, Replicas{}, nil)
	require.NoError(t, err)
	require.Zero(t, acked)
	requireAppended(t, c1.Results)
	requireAppended(t, c2.Results)

	msgs := entries(t, client, p.stream)
	assert.Equal(t, []string{"a1", "b1", "a2", "b2", "b3", "a3"}, uuidsOf(msgs), "the writes' order")
	assert.Equal(t, append(ids(c1.Results), ids(c2.Results)...), idsOf(msgs))
	assert.Equal(t, "3", p.state(t, client, "a"))
	assert.Equal(t, "3", p.state(t, client, "b"))

	res := flush(t, client, p.seq("b2", "b", 2), p.seq("a4", "a", 4), p.seq("c2", "c", 2), p.seq("a1", "a", 1))
	requireOK(t, res)
	assert.Equal(t, []bool{true, false, false, true}, dups(res))
	assert.Equal(t, "4", p.state(t, client, "a"))
	assert.Equal(t, "3", p.state(t, client, "b"))
	assert.Equal(t, "2 1-1", p.state(t, client, "c"), "a producer of its own")
	assert.Equal(t, []string{"a1", "b1", "a2", "b2", "b3", "a3", "a4", "c2"}, uuidsOf(entries(t, client, p.stream)))
}

// TestAppendSeqOffloaded: a sequenced offloaded append writes its payload key (with the
// payload TTL) and indexes it once as "id|ref"; sent again it is a duplicate that writes no
// payload key and no index member, and the payload keys of the messages after a duplicate
// in one call are the right ones.
func TestAppendSeqOffloaded(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	const ttl = 10 * time.Minute
	w := p.seqOffload("u1", "r1", "body-1", ttl, "a", 1)
	first := flush(t, client, w)
	requireAppended(t, first)
	id := first[0].StreamID()

	v, err := payload.Get(ctx, client, p.payloadKey("r1"))
	require.NoError(t, err)
	assert.Equal(t, "body-1", v)
	pttl, err := client.PTTL(ctx, p.payloadKey("r1")).Result()
	require.NoError(t, err)
	assert.Greater(t, pttl, ttl-time.Minute)
	assert.LessOrEqual(t, pttl, ttl)
	idx, err := client.ZRangeWithScores(ctx, p.index, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, idx, 1)
	assert.Equal(t, id+"|r1", idx[0].Member)
	assert.Equal(t, entryMs(t, id), idx[0].Score)
	msgs := entries(t, client, p.stream)
	require.Len(t, msgs, 1)
	assert.Equal(t, "r1", payload.Ref(msgs[0].Values))
	assert.Equal(t, "u1", msgs[0].Values["uuid"])

	require.NoError(t, client.Del(ctx, p.payloadKey("r1")).Err()) // a rewrite would show
	again := flush(t, client, w)
	requireDuplicates(t, again)
	assert.Zero(t, client.Exists(ctx, p.payloadKey("r1")).Val(), "the duplicate writes no payload")
	assert.Equal(t, int64(1), client.ZCard(ctx, p.index).Val(), "no second index member")
	assert.Len(t, entries(t, client, p.stream), 1)

	res := flush(t, client,
		p.seqOffload("u1", "r9", "body-9", ttl, "a", 1), // a duplicate: r9 is never written
		p.seqOffload("u2", "r2", "body-2", ttl, "a", 2),
	)
	requireOK(t, res)
	assert.Equal(t, []bool{true, false}, dups(res))
	assert.Zero(t, client.Exists(ctx, p.payloadKey("r9")).Val())
	v, err = payload.Get(ctx, client, p.payloadKey("r2"))
	require.NoError(t, err)
	assert.Equal(t, "body-2", v, "the payload after a duplicate in its own key")
	members, err := client.ZRange(ctx, p.index, 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{id + "|r1", res[1].StreamID() + "|r2"}, members)
	payloads, err := client.Keys(ctx, p.payloadKey("*")).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{p.payloadKey("r2")}, payloads, "r1 deleted above, r9 never written")
	assert.Equal(t, "2", p.state(t, client, "a"))
}

// TestAppendSeqSequencer: a Sequencer numbers the unnumbered sequenced writes of its calls
// per partition, 1, 2, 3, ... in their order and on across Number calls, under its producer;
// it leaves numbered writes and writes without Seq untouched. Flushed, each partition's key of
// the producer reads its last number.
func TestAppendSeqSequencer(t *testing.T) {
	t.Parallel()
	client := start(t)
	p0, p1 := partOf(0), partOf(1)
	q := &Sequencer{Producer: "q"}
	c1 := &Call{Writes: []Write{
		p0.seq("x1", "", 0),
		p1.seq("y1", "other", 0), // unnumbered: the Sequencer's producer replaces it
		p0.seq("x2", "", 0),
		p0.seq("resent", "old", 7), // numbered already: kept
		p1.xadd("plain", "x"),
	}}
	c2 := &Call{Writes: []Write{p1.seq("y2", "", 0), p1.seq("y3", "", 0), p0.seq("x3", "", 0)}}
	q.Number([]*Call{c1, c2})

	type num struct {
		producer string
		seq      uint64
	}
	numOf := func(ws []Write) []num {
		out := make([]num, 0, len(ws))
		for _, w := range ws {
			if w.Seq == nil {
				out = append(out, num{"-", 0})
				continue
			}
			out = append(out, num{w.Seq.Producer, w.Seq.Seq})
		}
		return out
	}
	assert.Equal(t, []num{{"q", 1}, {"q", 1}, {"q", 2}, {"old", 7}, {"-", 0}}, numOf(c1.Writes))
	assert.Equal(t, []num{{"q", 2}, {"q", 3}, {"q", 3}}, numOf(c2.Writes))

	acked, err := Flush(context.Background(), client, []*Call{c1, c2}, Replicas{}, q)
	require.NoError(t, err)
	require.Zero(t, acked)
	requireOK(t, c1.Results)
	requireOK(t, c2.Results)
	assert.Equal(t, []bool{false, false, false, false, false}, dups(c1.Results))
	assert.Equal(t, "3", p0.state(t, client, "q"))
	assert.Equal(t, "3", p1.state(t, client, "q"))
	assert.Equal(t, "7 1-6", p0.state(t, client, "old"))
	assert.Empty(t, p1.state(t, client, "other"))
	assert.Equal(t, []string{"x1", "x2", "resent", "x3"}, uuidsOf(entries(t, client, p0.stream)))
	m1 := uuidsOf(entries(t, client, p1.stream))
	assert.ElementsMatch(t, []string{"plain", "y1", "y2", "y3"}, m1)
	var sequenced []string
	for _, u := range m1 {
		if u != "plain" {
			sequenced = append(sequenced, u)
		}
	}
	assert.Equal(t, []string{"y1", "y2", "y3"}, sequenced, "the sequenced appends in their order")

	// Numbered now: a second Number leaves them, and a new write goes on from 4.
	c3 := &Call{Writes: []Write{p0.seq("x4", "", 0)}}
	q.Number([]*Call{c1, c2, c3})
	assert.Equal(t, []num{{"q", 1}, {"q", 1}, {"q", 2}, {"old", 7}, {"-", 0}}, numOf(c1.Writes))
	assert.Equal(t, []num{{"q", 4}}, numOf(c3.Writes))
	acked, err = Flush(context.Background(), client, []*Call{c1, c2, c3}, Replicas{}, q)
	require.NoError(t, err)
	require.Zero(t, acked)
	requireDuplicates(t, c2.Results)
	requireDuplicates(t, []Result{c1.Results[0], c1.Results[1], c1.Results[2], c1.Results[3]})
	requireAppended(t, c3.Results)
	assert.Equal(t, "4", p0.state(t, client, "q"))

	t.Run("another producer", func(t *testing.T) {
		r := &Sequencer{Producer: "r"}
		c := &Call{Writes: []Write{p0.seq("z1", "", 0)}}
		r.Number([]*Call{c})
		assert.Equal(t, []num{{"r", 1}}, numOf(c.Writes), "its own numbers")
	})
}

// TestAppendSeqRefusedCallKeepsIdempotency: a call refused at its second message (an entry
// without fields) reports the error for every message of the call; publishing the call again
// (the same numbers) must not append its first message twice.
func TestAppendSeqRefusedCallKeepsIdempotency(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	bad := p.seq("u2", "a", 2)
	bad.XAdd = bad.XAdd[:3] // xadd STREAM *: no field
	res := flush(t, client, p.seq("u1", "a", 1), bad)
	require.Error(t, res[0].Err(), "one script call: one error for all")
	require.Error(t, res[1].Err())
	assert.False(t, res[0].Duplicate())
	assert.Empty(t, res[0].StreamID())

	again := flush(t, client, p.seq("u1", "a", 1))
	requireOK(t, again)
	assert.True(t, again[0].Duplicate(), "the resend is a duplicate")
	assert.Equal(t, []string{"u1"}, uuidsOf(entries(t, client, p.stream)), "u1 appended once in all")
}

// TestAppendSeqClusterSlots: on a 3-master cluster one Flush of sequenced appends (inline and
// offloaded) to partitions served by different masters appends each message once; the same
// calls sent again are duplicates, every one, and each partition holds each message once.
// The producer keys are in their partition's slot.
func TestAppendSeqClusterSlots(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	client := cluster.Client(t)
	ctx := context.Background()
	require.NoError(t, LoadScripts(ctx, client))

	const parts = 6
	q := &Sequencer{Producer: "q"}
	var calls []*Call
	masters := map[string]bool{}
	for round := range 2 { // two calls, each writing to every partition
		c := &Call{}
		for i := range parts {
			p := partIn(i, 1) // a record per partition, in its slot
			in := p.seq(fmt.Sprintf("in-%d-%d", i, round), "", 0)
			off := p.seqOffload(fmt.Sprintf("off-%d-%d", i, round), fmt.Sprintf("r-%d-%d", i, round), "body", time.Minute, "", 0)
			c.Writes = append(c.Writes, in, off)
		}
		calls = append(calls, c)
	}
	for i := range parts {
		p := partIn(i, 1) // a record per partition, in its slot
		slot, err := client.ClusterKeySlot(ctx, p.stream).Result()
		require.NoError(t, err)
		master, err := cluster.MasterOf(int(slot))
		require.NoError(t, err)
		masters[master] = true
	}
	require.Greater(t, len(masters), 1, "the partitions are spread over masters")

	q.Number(calls)
	acked, err := Flush(ctx, client, calls, Replicas{}, q)
	require.NoError(t, err)
	require.Zero(t, acked)
	for _, c := range calls {
		requireAppended(t, c.Results)
	}
	check := func() {
		t.Helper()
		for i := range parts {
			p := partIn(i, 1) // a record per partition, in its slot
			assert.Equal(t, []string{fmt.Sprintf("in-%d-0", i), fmt.Sprintf("off-%d-0", i),
				fmt.Sprintf("in-%d-1", i), fmt.Sprintf("off-%d-1", i)},
				uuidsOf(entries(t, client, p.stream)), "partition %d", i)
			assert.Equal(t, "4", p.state(t, client, "q"), "partition %d", i)
			assert.Equal(t, int64(2), client.ZCard(ctx, p.index).Val(), "partition %d", i)
			want, err := client.ClusterKeySlot(ctx, p.stream).Result()
			require.NoError(t, err)
			for _, k := range []string{p.producerKey("q"), p.index, p.payloadKey(fmt.Sprintf("r-%d-0", i))} {
				slot, err := client.ClusterKeySlot(ctx, k).Result()
				require.NoError(t, err)
				assert.Equal(t, want, slot, k)
			}
			v, err := payload.Get(ctx, client, p.payloadKey(fmt.Sprintf("r-%d-1", i)))
			require.NoError(t, err)
			assert.Equal(t, "body", v)
		}
	}
	check()

	q.Number(calls) // numbered: untouched
	acked, err = Flush(ctx, client, calls, Replicas{}, q)
	require.NoError(t, err)
	require.Zero(t, acked)
	for _, c := range calls {
		requireDuplicates(t, c.Results)
	}
	check()
}

// six is a sequenced inline append of a message with uuid whose entry has the default
// Marshaler's three fields (the script's path without unpack).
func (p part) six(uuid, producer string, n uint64) Write {
	w := Write{Partition: p.p, XAdd: []any{"xadd", p.stream, "*", codec.UUIDField, uuid, codec.MetadataField, "", codec.PayloadField, "body-" + uuid}}
	w.Seq = p.seqOf(producer, n)
	return w
}

// TestAppendSeqOneCallOverPartitions: on a single server one Flush of sequenced appends to
// three partitions (entries of three fields and of two, offloaded ones, two producers in one
// partition, interleaved) is one script call; each partition holds its messages once, in
// order, with their fields and payloads; the same writes sent again are duplicates, every one,
// in one call again.
func TestAppendSeqOneCallOverPartitions(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p0, p1, p2 := partOf(0), partOf(1), partOf(2)
	writes := []Write{
		p0.six("a1", "a", 1), p1.seqOffload("o1", "r1", "big-1", time.Hour, "a", 1), p2.seq("c1", "a", 1),
		p0.six("a2", "a", 2), p0.six("b5", "b", 5), p2.six("c2", "a", 2), p1.seqOffload("o2", "r2", "big-2", time.Hour, "a", 2),
		p0.six("a3", "a", 3), p2.seq("c3", "a", 3),
	}
	require.NoError(t, client.ConfigResetStat(ctx).Err())
	res := flush(t, client, writes...)
	requireAppended(t, res)
	assert.Equal(t, int64(1), evalshaCalls(t, client), "one script call for the pipeline")

	assert.Equal(t, []string{"a1", "a2", "b5", "a3"}, uuidsOf(entries(t, client, p0.stream)))
	assert.Equal(t, []string{"o1", "o2"}, uuidsOf(entries(t, client, p1.stream)))
	assert.Equal(t, []string{"c1", "c2", "c3"}, uuidsOf(entries(t, client, p2.stream)))
	assert.Equal(t, "body-a2", entries(t, client, p0.stream)[1].Values["payload"])
	assert.Equal(t, "", entries(t, client, p0.stream)[1].Values["metadata"])
	assert.Equal(t, "big-2", client.Get(ctx, p1.payloadKey("r2")).Val(), "the payload stored")
	assert.Equal(t, int64(2), client.ZCard(ctx, p1.index).Val(), "both payloads indexed")
	assert.Equal(t, "3", p0.state(t, client, "a"))
	assert.Equal(t, "5 1-4", p0.state(t, client, "b"), "b's numbers below 5 may come again")
	assert.Equal(t, "2", p1.state(t, client, "a"))
	for i, w := range writes {
		assert.Equal(t, idsOf(entries(t, client, partOf(w.Partition).stream))[indexOf(writes, i)], res[i].StreamID(), "write %d names its entry", i)
	}

	again := flush(t, client, writes...)
	requireDuplicates(t, again)
	assert.Equal(t, int64(2), evalshaCalls(t, client), "one more call")
	assert.Len(t, entries(t, client, p0.stream), 4, "nothing appended again")
	assert.Len(t, entries(t, client, p1.stream), 2)
	assert.Len(t, entries(t, client, p2.stream), 3)
}

// indexOf is write i's place among the writes of its partition.
func indexOf(writes []Write, i int) int {
	n := 0
	for j := range i {
		if writes[j].Partition == writes[i].Partition {
			n++
		}
	}
	return n
}

// evalshaCalls is the EVALSHA calls INFO commandstats counted since the last CONFIG RESETSTAT.
func evalshaCalls(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:calls="); ok {
			var n int64
			_, err := fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}
