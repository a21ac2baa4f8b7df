package publish

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flushBy sends writes as one call of one Flush by producer q, numbering them first, and
// returns their results.
func flushBy(t *testing.T, rdb redis.UniversalClient, q *Sequencer, writes ...Write) []Result {
	t.Helper()
	c := &Call{Writes: writes}
	q.Number([]*Call{c})
	_, err := Flush(context.Background(), rdb, []*Call{c}, Replicas{}, q)
	require.NoError(t, err)
	require.Len(t, c.Results, len(writes))
	return c.Results
}

// recordAnswers is what the script call of r answered for the call's records, after the
// messages' ids: "" when a record held what the producer believed, else "=" and what it holds.
func recordAnswers(t *testing.T, r Result, msgs int) []string {
	t.Helper()
	c, ok := r.cmd.(*redis.StringSliceCmd)
	require.True(t, ok, "a sequenced append's call")
	reply, err := c.Result()
	require.NoError(t, err)
	return reply[msgs:]
}

// fresh are sequenced inline appends of uuids to p, for a Sequencer to number.
func fresh(p part, uuids ...string) []Write {
	out := make([]Write, len(uuids))
	for i, u := range uuids {
		out[i] = p.seq(u, "", 0)
	}
	return out
}

// TestAppendSeqRecordKnown: a producer that knows what its record holds writes it with one
// SET ... GET and the script answers "" for it (nothing read, nothing parsed), call after
// call; the record reads every partition's last number.
func TestAppendSeqRecordKnown(t *testing.T) {
	t.Parallel()
	client := start(t)
	p0, p1 := partOf(0), partOf(1)
	q := &Sequencer{Producer: "q"}

	res := flushBy(t, client, q, append(fresh(p0, "a1", "a2"), fresh(p1, "b1")...)...)
	requireAppended(t, res)
	assert.Equal(t, []string{""}, recordAnswers(t, res[0], 3), "no record yet, as q believed")
	assert.Equal(t, "0:2,1:1", client.Get(context.Background(), p0.producerKey("q")).Val())

	for round := range 3 {
		res = flushBy(t, client, q, append(fresh(p1, "b"), fresh(p0, "a")...)...)
		requireAppended(t, res)
		assert.Equal(t, []string{""}, recordAnswers(t, res[0], 2), "round %d: the record held what q believed", round)
	}
	assert.Equal(t, "5", p0.state(t, client, "q"))
	assert.Equal(t, "4", p1.state(t, client, "q"))
	assert.Equal(t, []string{"a1", "a2", "a", "a", "a"}, uuidsOf(entries(t, client, p0.stream)))
}

// TestAppendSeqRecordChangedBehind: a record that is not what its producer believes (gone
// after its window, or deleted by an operator) is read and written again by the script, which
// answers what it holds now: the producer learns it and is back on the short path at the next
// call, and no message is lost or appended twice.
func TestAppendSeqRecordChangedBehind(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	q := &Sequencer{Producer: "q"}
	requireAppended(t, flushBy(t, client, q, fresh(p, "m1", "m2")...))
	require.NoError(t, client.Del(ctx, p.producerKey("q")).Err())

	res := flushBy(t, client, q, fresh(p, "m3")...)
	requireAppended(t, res)
	assert.Equal(t, []string{"=0:3 1-2"}, recordAnswers(t, res[0], 1),
		"read again: 1 and 2 are a gap (they may be sends again of messages it forgot)")

	res = flushBy(t, client, q, fresh(p, "m4")...)
	requireAppended(t, res)
	assert.Equal(t, []string{""}, recordAnswers(t, res[0], 1), "learned: the short path again")
	assert.Equal(t, "4 1-2", p.state(t, client, "q"))

	require.NoError(t, client.Set(ctx, p.producerKey("q"), "0:4 1-2,1:7", 0).Err()) // not what q wrote
	res = flushBy(t, client, q, fresh(p, "m5")...)
	requireAppended(t, res) // checked: 5 is above the highest number
	assert.Equal(t, []string{"=0:5 1-2,1:7"}, recordAnswers(t, res[0], 1))
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, uuidsOf(entries(t, client, p.stream)))
}

// runTwice is a go-redis hook that sends every pipeline twice, as go-redis does when it
// retries a pipeline whose reply was lost although Redis had run it.
type runTwice struct{}

func (runTwice) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (runTwice) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (runTwice) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		_ = next(ctx, cmds) // the first run, whose reply is "lost"
		return next(ctx, cmds)
	}
}

// TestAppendSeqCallRunTwice: a call whose new runs would be appended without a check, run
// a second time by the client, appends nothing the second time: the record no longer holds
// what the producer believed, so the second run checks each message and finds it appended.
// The producer then learns what the record holds and is back on the short path.
func TestAppendSeqCallRunTwice(t *testing.T) {
	t.Parallel()
	client := start(t)
	p0, p1 := partOf(0), partOf(1)
	q := &Sequencer{Producer: "q"}
	requireAppended(t, flushBy(t, client, q, fresh(p0, "a1")...))

	twice := redis.NewClient(client.Options())
	t.Cleanup(func() { _ = twice.Close() })
	twice.AddHook(runTwice{})
	res := flushBy(t, twice, q, append(fresh(p0, "a2", "a3"), fresh(p1, "b1")...)...)
	for i, r := range res {
		require.NoError(t, r.Err(), "write %d", i)
		assert.True(t, r.Duplicate(), "write %d: appended by the first run", i)
	}
	assert.Equal(t, []string{"=0:3,1:1"}, recordAnswers(t, res[0], 3))

	res = flushBy(t, client, q, fresh(p0, "a4")...)
	requireAppended(t, res)
	assert.Equal(t, []string{""}, recordAnswers(t, res[0], 1), "learned: the short path again")
	assert.Equal(t, []string{"a1", "a2", "a3", "a4"}, uuidsOf(entries(t, client, p0.stream)))
	assert.Equal(t, []string{"b1"}, uuidsOf(entries(t, client, p1.stream)))
}

// TestAppendSeqRecordAfterFailedCall: a call that failed (an XADD refused mid-call) leaves
// its producer not knowing what its record holds; the record holds the numbers appended
// before the refusal, so the next call, which reads it, appends the rest once.
func TestAppendSeqRecordAfterFailedCall(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	q := &Sequencer{Producer: "q"}
	requireAppended(t, flushBy(t, client, q, fresh(p, "m1")...))

	bad := p.seq("m3", "", 0)
	bad.XAdd = bad.XAdd[:3] // xadd STREAM *: no field
	writes := []Write{p.seq("m2", "", 0), bad, p.seq("m4", "", 0)}
	c := &Call{Writes: writes}
	q.Number([]*Call{c})
	_, err := Flush(context.Background(), client, []*Call{c}, Replicas{}, q)
	require.NoError(t, err)
	for i, r := range c.Results {
		require.Error(t, r.Err(), "write %d: one script call, one error for all", i)
	}
	assert.Equal(t, "2", p.state(t, client, "q"), "2 was appended before the refusal")

	writes[1] = p.seq("m3", "q", writes[1].Seq.Seq) // fixed, same number
	c = &Call{Writes: writes}
	q.Number([]*Call{c})
	_, err = Flush(context.Background(), client, []*Call{c}, Replicas{}, q)
	require.NoError(t, err)
	requireOK(t, c.Results)
	assert.Equal(t, []bool{true, false, false}, dups(c.Results))
	assert.Equal(t, []string{"=0:4"}, recordAnswers(t, c.Results[0], 3), "read, not believed")
	assert.Equal(t, []string{"m1", "m2", "m3", "m4"}, uuidsOf(entries(t, client, p.stream)))

	res := flushBy(t, client, q, fresh(p, "m5")...)
	requireAppended(t, res)
	assert.Equal(t, []string{""}, recordAnswers(t, res[0], 1))
}

// TestAppendSeqRecordGroups: on a single server the partitions 0..63 of a topic share a
// producer's record, 64..127 the next, and so on: one call over partitions of three groups
// writes three records, each with its partitions' numbers.
func TestAppendSeqRecordGroups(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	parts := []part{partOf(0), partOf(63), partOf(64), partOf(130)}
	q := &Sequencer{Producer: "q"}
	var writes []Write
	for _, p := range parts {
		writes = append(writes, fresh(p, "x", "y")...)
	}
	res := flushBy(t, client, q, writes...)
	requireAppended(t, res)
	assert.Equal(t, []string{"", "", ""}, recordAnswers(t, res[0], len(writes)), "three records")

	assert.Equal(t, "0:2,63:2", client.Get(ctx, partOf(0).producerKey("q")).Val())
	assert.Equal(t, "64:2", client.Get(ctx, partOf(64).producerKey("q")).Val())
	assert.Equal(t, "130:2", client.Get(ctx, partOf(128).producerKey("q")).Val())
	assert.Equal(t, partOf(0).producerKey("q"), parts[1].producerKey("q"), "63 in 0's group")
	assert.NotEqual(t, parts[1].producerKey("q"), parts[2].producerKey("q"), "64 starts a group")

	requireDuplicates(t, flushBy(t, client, q, writes...)) // numbered: sent again
	for _, p := range parts {
		assert.Len(t, entries(t, client, p.stream), 2)
	}
}

// TestRecordViewWith: what a producer expects its record to hold after new runs: each run
// continuing its partition's numbers moves its last number (a new partition joins the end),
// gaps kept as they are; a run that skips numbers makes it unknown (the script records the
// gap), as does an unknown view.
func TestRecordViewWith(t *testing.T) {
	v := parseView("0:7 2-3,5:1")
	next := v.with([]newRun{{name: "5", first: 2, last: 4}, {name: "9", first: 1, last: 1}, {name: "0", first: 8, last: 8}})
	require.NotNil(t, next)
	assert.Equal(t, "0:8 2-3,5:4,9:1", next.held)
	assert.Equal(t, "0:7 2-3,5:1", next.before)

	assert.Nil(t, v.with([]newRun{{name: "0", first: 9, last: 9}}), "8 skipped")
	assert.Nil(t, v.with([]newRun{{name: "7", first: 2, last: 2}}), "a new partition's 1 skipped")
	assert.Nil(t, (&recordView{}).with([]newRun{{name: "0", first: 1, last: 1}}), "unknown")
	assert.Equal(t, "1:1", noRecord.with([]newRun{{name: "1", first: 1, last: 1}}).held)
	assert.Equal(t, "~", parseView("").held, "none")
	assert.Empty(t, parseView("0:x").held, "unreadable: unknown")
}
