package publish

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// window is the idempotency window of most tests: the Publisher's default, long enough that
// no bucket boundary is crossed between two calls of one test but by a rare chance.
const window = 2 * time.Minute

// space names the keys the way a Publisher with the default prefixes does.
var space = keys.New("", "")

// part is one partition of topic "t" and the names of its keys.
type part struct {
	p, group              int // the partition, and how many share a producer record (recordGroup; 1 on a Cluster)
	stream, index, prefix string
}

func partOf(p int) part { return partIn(p, recordGroup) }

// partIn is partition p where group partitions share a producer record.
func partIn(p, group int) part {
	return part{p: p, group: group, stream: space.PartitionStream("t", p), index: space.PayloadIndex("t", p),
		prefix: space.Idempotency("t", p)}
}

// payloadKey is the key of the partition's offloaded payload ref.
func (p part) payloadKey(ref string) string { return space.Payload("t", p.p, ref) }

// xadd is a plain append of a message with uuid and body (no Once).
func (p part) xadd(uuid, body string) Write {
	return Write{Partition: p.p, XAdd: []any{"xadd", p.stream, "*", "uuid", uuid, "payload", body}}
}

// once is an idempotent append of a message with uuid and body within w.
func (p part) once(uuid, body string, w time.Duration) Write {
	wr := p.xadd(uuid, body)
	wr.Once = p.onceOf(uuid, w)
	return wr
}

func (p part) onceOf(uuid string, w time.Duration) *Once {
	return &Once{Prefix: p.prefix, Index: p.index, UUID: uuid, Window: w}
}

// offload is an offloaded append (no Once) of body under ref, kept ttl (0: for ever).
func (p part) offload(uuid, ref, body string, ttl time.Duration) Write {
	return Write{Partition: p.p, Offload: &payload.Offload{
		Stored: payload.Stored{Key: p.payloadKey(ref), Index: p.index, Ref: ref, Payload: []byte(body), TTL: ttl},
		Stream: p.stream,
		Fields: append(payload.RefFields(ref, len(body)), "uuid", uuid),
	}}
}

// onceOffload is an idempotent offloaded append within w.
func (p part) onceOffload(uuid, ref, body string, ttl, w time.Duration) Write {
	wr := p.offload(uuid, ref, body, ttl)
	wr.Once = p.onceOf(uuid, w)
	return wr
}

// start starts a private redis-server with the append script cached.
func start(t *testing.T) *redis.Client {
	t.Helper()
	client := redistest.Start(t).Client(t)
	require.NoError(t, LoadScripts(context.Background(), client))
	return client
}

// flush sends writes as one call of one Flush and returns their results.
func flush(t *testing.T, rdb redis.UniversalClient, writes ...Write) []Result {
	t.Helper()
	c := &Call{Writes: writes}
	acked, err := Flush(context.Background(), rdb, []*Call{c}, Replicas{}, nil)
	require.NoError(t, err)
	require.Zero(t, acked)
	require.Len(t, c.Results, len(writes))
	return c.Results
}

// requireOK fails unless every result is free of errors.
func requireOK(t *testing.T, results []Result) {
	t.Helper()
	for i, r := range results {
		require.NoError(t, r.Err(), "write %d", i)
	}
}

// ids are the results' stream ids.
func ids(results []Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.StreamID()
	}
	return out
}

// dups are the results' Duplicate flags.
func dups(results []Result) []bool {
	out := make([]bool, len(results))
	for i, r := range results {
		out[i] = r.Duplicate()
	}
	return out
}

// entries reads the whole stream.
func entries(t *testing.T, rdb redis.Cmdable, stream string) []redis.XMessage {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	return msgs
}

// uuidsOf are the uuid fields of msgs, in their order.
func uuidsOf(msgs []redis.XMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i], _ = m.Values["uuid"].(string)
		if u, ok := m.Values[codec.UUIDField].(string); ok { // the default layout's field
			out[i] = u
		}
	}
	return out
}

// idsOf are the ids of msgs, in their order.
func idsOf(msgs []redis.XMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// buckets are the numbers of the UUID buckets under prefix that exist, ascending.
func buckets(t *testing.T, rdb redis.Cmdable, prefix string) []int64 {
	t.Helper()
	found, err := rdb.Keys(context.Background(), prefix+":*").Result()
	require.NoError(t, err)
	out := make([]int64, 0, len(found))
	for _, k := range found {
		n, err := strconv.ParseInt(strings.TrimPrefix(k, prefix+":"), 10, 64)
		require.NoError(t, err, k)
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// entryMs is the milliseconds part of stream id.
func entryMs(t *testing.T, id string) float64 {
	t.Helper()
	ms, _, ok := strings.Cut(id, "-")
	require.True(t, ok, id)
	f, err := strconv.ParseFloat(ms, 64)
	require.NoError(t, err)
	return f
}

// reply is one message's pair of the append script's reply.
type reply struct {
	ID  string
	Dup bool
}

// evalAt sends the append script for writes (idempotent appends of one partition) the way
// Flush does, but with the buckets of a caller whose clock is in bucket at instead of this
// process's estimate of the server's, and returns the script's reply. A call refused for the
// clock is sent again as Flush sends it, with the buckets of the server's clock.
func evalAt(t *testing.T, rdb redis.UniversalClient, at int64, writes ...Write) []reply {
	t.Helper()
	ctx := context.Background()
	var b onceBatches
	results := make([]Result, len(writes))
	for i, w := range writes {
		b.add(w, &results[i])
	}
	require.Len(t, b.all, 1, "one partition, at most maxOnce writes")
	batch := b.all[0]
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		batch.queue(ctx, pipe, at*batch.half)
		return nil
	})
	b.resendSkewed(ctx, rdb, Replicas{})
	raw, err := batch.cmd.Slice()
	require.NoError(t, err)
	require.Len(t, raw, 2*len(writes))
	out := make([]reply, len(writes))
	for i := range out {
		out[i].ID, _ = raw[2*i].(string)
		out[i].Dup = raw[2*i+1] == int64(1)
	}
	return out
}

// serverBucket is the bucket of length half (ms) the server's clock is in.
func serverBucket(t *testing.T, rdb redis.Cmdable, half int64) int64 {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	require.NoError(t, err)
	return now.UnixMilli() / half
}

// TestAppendOnceWithinWindow: a message published again within the window appends nothing
// and answers the first append's id as a duplicate; its UUID is recorded in one bucket of the
// partition, mapped to that id.
func TestAppendOnceWithinWindow(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)

	first := flush(t, client, p.once("u1", "first", window))
	requireOK(t, first)
	require.NotEmpty(t, first[0].StreamID())
	assert.False(t, first[0].Duplicate())

	again := flush(t, client, p.once("u1", "second", window))
	requireOK(t, again)
	assert.True(t, again[0].Duplicate(), "published again within the window")
	assert.Equal(t, first[0].StreamID(), again[0].StreamID(), "the first append's id")

	msgs := entries(t, client, p.stream)
	require.Len(t, msgs, 1, "appended once")
	assert.Equal(t, first[0].StreamID(), msgs[0].ID)
	assert.Equal(t, "first", msgs[0].Values["payload"], "the first append's values stay")

	bs := buckets(t, client, p.prefix)
	require.Len(t, bs, 1, "one bucket")
	got, err := client.HGetAll(ctx, keys.IdempotencyBucket(p.prefix, bs[0])).Result()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"u1": first[0].StreamID()}, got)
	assert.Zero(t, client.Exists(ctx, p.index).Val(), "no payload index for an inline message")
}

// TestAppendOnceMixedBatch: in one call new messages are appended in order, while a UUID
// recorded by an earlier call and a UUID repeated within the call are duplicates answering
// the id of their first append.
func TestAppendOnceMixedBatch(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	before := flush(t, client, p.once("old", "old", window))
	requireOK(t, before)

	res := flush(t, client,
		p.once("a", "a1", window),
		p.once("old", "old2", window),
		p.once("b", "b1", window),
		p.once("a", "a2", window),
		p.once("c", "c1", window),
		p.once("b", "b2", window),
	)
	requireOK(t, res)
	assert.Equal(t, []bool{false, true, false, true, false, true}, dups(res))
	got := ids(res)
	assert.Equal(t, before[0].StreamID(), got[1], "old: the earlier call's id")
	assert.Equal(t, got[0], got[3], "a: its first append's id")
	assert.Equal(t, got[2], got[5], "b: its first append's id")

	msgs := entries(t, client, p.stream)
	assert.Equal(t, []string{"old", "a", "b", "c"}, uuidsOf(msgs), "each UUID once, in order")
	assert.Equal(t, []string{before[0].StreamID(), got[0], got[2], got[4]}, idsOf(msgs))
	assert.Equal(t, "a1", msgs[1].Values["payload"])
	assert.Equal(t, "b1", msgs[2].Values["payload"])
}

// TestAppendOncePartitionsApart: duplicates are found per partition: one UUID is appended
// once to each partition it is sent to, in one Flush whose writes to two partitions
// interleave.
func TestAppendOncePartitionsApart(t *testing.T) {
	t.Parallel()
	client := start(t)
	p0, p1 := partOf(0), partOf(1)
	res := flush(t, client,
		p0.once("u", "p0-1", window),
		p1.once("u", "p1-1", window),
		p0.once("v", "p0-2", window),
		p1.once("u", "p1-2", window),
		p1.once("v", "p1-3", window),
	)
	requireOK(t, res)
	assert.Equal(t, []bool{false, false, false, true, false}, dups(res))
	got := ids(res)
	assert.Equal(t, got[1], got[3], "partition 1's first append of u")
	assert.Equal(t, []string{"u", "v"}, uuidsOf(entries(t, client, p0.stream)))
	assert.Equal(t, []string{got[0], got[2]}, idsOf(entries(t, client, p0.stream)))
	assert.Equal(t, []string{"u", "v"}, uuidsOf(entries(t, client, p1.stream)))
	assert.Equal(t, []string{got[1], got[4]}, idsOf(entries(t, client, p1.stream)))
}

// TestAppendOnceSplitsLargeBatches: more than maxOnce idempotent appends to one partition go
// as several script calls, in order, and a UUID of the first call repeated in the second is
// still a duplicate.
func TestAppendOnceSplitsLargeBatches(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	const n = maxOnce + 44
	writes := make([]Write, n)
	want := make([]string, 0, n)
	for i := range writes {
		u := fmt.Sprintf("u%03d", i)
		switch i {
		case n - 1:
			u = "u003" // appended by the first script call
		case maxOnce + 1:
			u = fmt.Sprintf("u%03d", maxOnce) // appended just before, by the same second call
		default:
			want = append(want, u)
		}
		writes[i] = p.once(u, "x", window)
	}
	res := flush(t, client, writes...)
	requireOK(t, res)
	for i, r := range res {
		switch i {
		case n - 1:
			assert.True(t, r.Duplicate(), "write %d", i)
			assert.Equal(t, res[3].StreamID(), r.StreamID())
		case maxOnce + 1:
			assert.True(t, r.Duplicate(), "write %d", i)
			assert.Equal(t, res[maxOnce].StreamID(), r.StreamID())
		default:
			assert.False(t, r.Duplicate(), "write %d", i)
		}
	}
	msgs := entries(t, client, p.stream)
	assert.Equal(t, want, uuidsOf(msgs), "every new UUID once, in the writes' order")
}

// TestAppendOnceAfterWindow: a message published again while the server's clock is two
// buckets (a window) past the first append's bucket is still a duplicate; once it is three
// buckets (one and a half windows) past, the server has expired that bucket and the message
// is appended again. Time is the server's (a caller's clock does not move it): the window is
// short and the test waits for the server's clock to reach each bucket.
func TestAppendOnceAfterWindow(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	const w = time.Second
	half := w.Milliseconds() / 2

	first := flush(t, client, p.once("u1", "first", w))
	requireOK(t, first)
	bs := buckets(t, client, p.prefix)
	require.Len(t, bs, 1)
	b := bs[0]
	at, err := client.PExpireTime(ctx, keys.IdempotencyBucket(p.prefix, b)).Result()
	require.NoError(t, err)
	assert.Equal(t, (b+3)*half, at.Milliseconds(), "the bucket expires when bucket b+3 begins")

	untilBucket(t, client, half, b+2)
	late := flush(t, client, p.once("u1", "late", w))
	require.Equal(t, b+2, serverBucket(t, client, half), "sent within bucket b+2 (half a second)")
	requireOK(t, late)
	assert.True(t, late[0].Duplicate(), "within the window")
	assert.Equal(t, first[0].StreamID(), late[0].StreamID())
	require.Len(t, entries(t, client, p.stream), 1)

	untilBucket(t, client, half, b+3)
	after := flush(t, client, p.once("u1", "after", w))
	requireOK(t, after)
	assert.False(t, after[0].Duplicate(), "after the window")
	assert.NotEqual(t, first[0].StreamID(), after[0].StreamID())
	msgs := entries(t, client, p.stream)
	assert.Equal(t, []string{first[0].StreamID(), after[0].StreamID()}, idsOf(msgs), "appended again")
	assert.Equal(t, "after", msgs[1].Values["payload"])
}

// untilBucket waits until the server's clock is in bucket n (of length half ms) or later.
func untilBucket(t *testing.T, rdb redis.Cmdable, half, n int64) {
	t.Helper()
	for {
		now, err := rdb.Time(context.Background()).Result()
		require.NoError(t, err)
		left := n*half - now.UnixMilli()
		if left <= 0 {
			return
		}
		<-time.After(time.Duration(left) * time.Millisecond)
	}
}

// TestAppendOnceBucketExpiry: the bucket a call records its UUIDs in is the server clock's
// bucket of half a window, and expires one and a half windows after it began: its PTTL is
// above one window and at most one and a half. A 1 ms window (1 ms buckets) still appends.
func TestAppendOnceBucketExpiry(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	for i, w := range []time.Duration{200 * time.Millisecond, window, time.Hour, time.Millisecond} {
		t.Run(w.String(), func(t *testing.T) {
			p := partOf(i)
			half := max(w.Milliseconds()/2, 1)
			lo := serverBucket(t, client, half)
			res := flush(t, client, p.once("u", "x", w))
			requireOK(t, res)
			require.False(t, res[0].Duplicate())
			require.Len(t, entries(t, client, p.stream), 1)
			if w < 10*time.Millisecond {
				return // its bucket lives 3 ms: it may be gone before it is read
			}
			bs := buckets(t, client, p.prefix)
			require.Len(t, bs, 1)
			b := bs[0]
			assert.GreaterOrEqual(t, b, lo, "the server's bucket at the call")
			assert.LessOrEqual(t, b, serverBucket(t, client, half))
			key := keys.IdempotencyBucket(p.prefix, b)
			at, err := client.PExpireTime(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, (b+3)*half, at.Milliseconds())
			if w < time.Second {
				return // too short to read a PTTL against
			}
			ttl, err := client.PTTL(ctx, key).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, w-time.Second, "remembered for at least the window")
			assert.LessOrEqual(t, ttl, w*3/2, "and at most one and a half")
		})
	}
}

// TestAppendOnceOffloaded: an idempotent offloaded append stores the payload in its own key
// (with the payload TTL, or none) and indexes it as "id|ref" scored by the entry's ms; a
// duplicate, within the call or later, writes no payload key, and the payload keys of the
// messages after a duplicate are still the right ones.
func TestAppendOnceOffloaded(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	const ttl = 10 * time.Minute
	res := flush(t, client,
		p.onceOffload("u1", "r1", "body-1", ttl, window),
		p.once("u2", "inline", window),
		p.onceOffload("u3", "r3", "body-3", ttl, window),
		p.onceOffload("u1", "r4", "body-4", ttl, window), // a duplicate: r4 is never written
		p.onceOffload("u5", "r5", "body-5", ttl, window),
	)
	requireOK(t, res)
	assert.Equal(t, []bool{false, false, false, true, false}, dups(res))
	got := ids(res)
	assert.Equal(t, got[0], got[3])

	for ref, body := range map[string]string{"r1": "body-1", "r3": "body-3", "r5": "body-5"} {
		v, err := payload.Get(ctx, client, p.payloadKey(ref))
		require.NoError(t, err, ref)
		assert.Equal(t, body, v, ref)
		pttl, err := client.PTTL(ctx, p.payloadKey(ref)).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, ttl-time.Minute, ref)
		assert.LessOrEqual(t, pttl, ttl, ref)
	}
	assert.Zero(t, client.Exists(ctx, p.payloadKey("r4")).Val(), "no payload for the duplicate")

	idx, err := client.ZRangeWithScores(ctx, p.index, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, idx, 3)
	for i, want := range []struct{ id, ref string }{{got[0], "r1"}, {got[2], "r3"}, {got[4], "r5"}} {
		assert.Equal(t, want.id+"|"+want.ref, idx[i].Member)
		assert.Equal(t, entryMs(t, want.id), idx[i].Score)
	}
	msgs := entries(t, client, p.stream)
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{"r1", "", "r3", "r5"},
		[]string{payload.Ref(msgs[0].Values), payload.Ref(msgs[1].Values), payload.Ref(msgs[2].Values), payload.Ref(msgs[3].Values)})

	again := flush(t, client, p.onceOffload("u3", "r6", "body-6", ttl, window))
	requireOK(t, again)
	assert.True(t, again[0].Duplicate())
	assert.Equal(t, got[2], again[0].StreamID())
	assert.Zero(t, client.Exists(ctx, p.payloadKey("r6")).Val(), "a later duplicate stores nothing")
	assert.Equal(t, int64(3), client.ZCard(ctx, p.index).Val())

	t.Run("no TTL", func(t *testing.T) {
		q := partOf(1)
		requireOK(t, flush(t, client, q.onceOffload("u", "r", "body", 0, window)))
		pttl, err := client.PTTL(ctx, q.payloadKey("r")).Result()
		require.NoError(t, err)
		assert.Equal(t, time.Duration(-1), pttl, "kept until deleted")
	})
}

// TestAppendOnceSkewedCallerClock: a caller whose clock is one bucket (half a window) ahead
// of or behind the server's still finds its own UUIDs, and a caller with the server's clock
// finds them too.
func TestAppendOnceSkewedCallerClock(t *testing.T) {
	t.Parallel()
	client := start(t)
	const w = 2 * time.Hour // one bucket an hour: the server's stays put during the test
	half := w.Milliseconds() / 2
	for i, skew := range []int64{1, -1} {
		t.Run(fmt.Sprintf("skew %+d", skew), func(t *testing.T) {
			p := partOf(i)
			caller := serverBucket(t, client, half) + skew
			first := evalAt(t, client, caller, p.once("u", "first", w))
			require.False(t, first[0].Dup)
			assert.Equal(t, []reply{{ID: first[0].ID, Dup: true}}, evalAt(t, client, caller, p.once("u", "again", w)))
			res := flush(t, client, p.once("u", "third", w))
			requireOK(t, res)
			assert.True(t, res[0].Duplicate(), "a caller with the server's clock")
			assert.Len(t, entries(t, client, p.stream), 1)
		})
	}
}

// TestAppendOnceCallerClockFarBehind: a caller whose clock is two windows (four buckets)
// behind the server's publishes the same message twice: it must be appended once.
func TestAppendOnceCallerClockFarBehind(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	const w = 2 * time.Hour
	half := w.Milliseconds() / 2
	p := partOf(0)
	caller := serverBucket(t, client, half) - 4
	first := evalAt(t, client, caller, p.once("u", "first", w))
	require.False(t, first[0].Dup)
	assert.NotEmpty(t, buckets(t, client, p.prefix), "the UUID is recorded")
	for _, b := range buckets(t, client, p.prefix) {
		ttl, err := client.PTTL(ctx, keys.IdempotencyBucket(p.prefix, b)).Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, w, "remembered for at least the window")
	}
	again := evalAt(t, client, caller, p.once("u", "again", w))
	assert.Equal(t, []reply{{ID: first[0].ID, Dup: true}}, again, "the retry is a duplicate")
	assert.Len(t, entries(t, client, p.stream), 1, "appended once")
}

// TestAppendOnceCallerClockAhead: a caller whose clock is one window (two buckets) ahead of
// the server's retries a publish half a window later, within the window: it must be a
// duplicate.
func TestAppendOnceCallerClockAhead(t *testing.T) {
	t.Parallel()
	client := start(t)
	const w = 2 * time.Hour
	half := w.Milliseconds() / 2
	p := partOf(0)
	caller := serverBucket(t, client, half) + 2
	first := evalAt(t, client, caller, p.once("u", "first", w))
	require.False(t, first[0].Dup)
	again := evalAt(t, client, caller+1, p.once("u", "again", w))
	assert.Equal(t, []reply{{ID: first[0].ID, Dup: true}}, again, "the retry is a duplicate")
	assert.Len(t, entries(t, client, p.stream), 1, "appended once")
}

// TestAppendOnceCallersWithOtherClocks: callers whose clocks disagree (one a window ahead of
// the server, one two windows behind, one on it) send the same message: it is appended once
// and recorded in the server's bucket, whoever sends it first.
func TestAppendOnceCallersWithOtherClocks(t *testing.T) {
	t.Parallel()
	client := start(t)
	const w = 2 * time.Hour
	half := w.Milliseconds() / 2
	p := partOf(0)
	s := serverBucket(t, client, half)
	first := evalAt(t, client, s+2, p.once("u", "ahead", w))
	require.False(t, first[0].Dup)
	assert.Equal(t, []int64{s}, buckets(t, client, p.prefix), "the server's bucket")
	behind := evalAt(t, client, s-4, p.once("u", "behind", w))
	assert.Equal(t, []reply{{ID: first[0].ID, Dup: true}}, behind, "a duplicate for a caller behind")
	res := flush(t, client, p.once("u", "on time", w))
	requireOK(t, res)
	assert.True(t, res[0].Duplicate(), "and for a caller on the server's clock")
	assert.Equal(t, first[0].ID, res[0].StreamID())
	assert.Len(t, entries(t, client, p.stream), 1, "appended once")
}

// TestAppendOnceRefusesOtherBuckets: append.lua refuses a call whose buckets do not hold the
// server's and the two before it with "SKEW <server ms>", and writes nothing.
func TestAppendOnceRefusesOtherBuckets(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	half := window.Milliseconds() / 2
	s := serverBucket(t, client, half)
	for _, first := range []int64{s - 4, s - 1, s + 5} { // named s-4..s-1 (behind), s-1..s+2, s+5..s+8 (ahead)
		t.Run(strconv.FormatInt(first-s, 10), func(t *testing.T) {
			names := []string{p.stream, p.index}
			for n := first; n < first+4; n++ {
				names = append(names, keys.IdempotencyBucket(p.prefix, n))
			}
			err := appendScript.Eval(ctx, client, names, half, first, 4, 0, 1, "u", "", "", 2, "uuid", "u").Err()
			require.Error(t, err)
			ms, ok := skewOf(err)
			require.True(t, ok, "%v", err)
			server, terr := client.Time(ctx).Result()
			require.NoError(t, terr)
			assert.InDelta(t, server.UnixMilli(), ms, 1000, "the server's clock")
			assert.Zero(t, client.Exists(ctx, p.stream).Val(), "nothing appended")
			assert.Empty(t, buckets(t, client, p.prefix), "nothing recorded")
		})
	}
}

// TestAppendOnceLearnsServerClock: a process whose estimate of the server's clock is off (a
// host 3 minutes behind or ahead of Redis, with the default 2-minute window) appends a
// message once through Flush: its first call is refused and sent again with the server's
// clock, which the client keeps; publishing the message again is a duplicate.
func TestAppendOnceLearnsServerClock(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	half := window.Milliseconds() / 2
	lo := serverBucket(t, client, half)
	offset := serverClock(client)
	for i, off := range []time.Duration{-3 * time.Minute, 3 * time.Minute} {
		offset.Store(off.Milliseconds())
		res := flush(t, client, p.once("u", "x", window))
		requireOK(t, res)
		assert.Equal(t, i > 0, res[0].Duplicate(), "sent %d", i)
		assert.InDelta(t, 0, offset.Load(), 1000, "the offset learned: the same machine's clock")
	}
	assert.Len(t, entries(t, client, p.stream), 1, "appended once")
	bs := buckets(t, client, p.prefix)
	require.Len(t, bs, 1)
	assert.GreaterOrEqual(t, bs[0], lo, "recorded in the server's bucket")
	assert.LessOrEqual(t, bs[0], serverBucket(t, client, half))
}

// TestAppendOnceRefusedFields: an idempotent append whose entry has no fields is refused with
// the XADD's error, and the refused call writes nothing: no entry, no bucket.
func TestAppendOnceRefusedFields(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	bad := p.once("u", "", window)
	bad.XAdd = bad.XAdd[:3] // xadd STREAM *: no field
	res := flush(t, client, bad)
	require.Error(t, res[0].Err())
	assert.Contains(t, res[0].Err().Error(), "Wrong number of args")
	assert.Empty(t, res[0].StreamID())
	assert.False(t, res[0].Duplicate())
	assert.Zero(t, client.Exists(ctx, p.stream).Val(), "no entry")
	assert.Empty(t, buckets(t, client, p.prefix), "no UUID recorded")

	ok := flush(t, client, p.once("u", "fixed", window))
	requireOK(t, ok)
	assert.False(t, ok[0].Duplicate(), "the refused UUID is not remembered")
}

// TestAppendOnceRefusedBatchKeepsIdempotency: a call refused at its second message (an entry
// without fields) reports the error for every message of the call; publishing its first
// message again must not append it twice.
func TestAppendOnceRefusedBatchKeepsIdempotency(t *testing.T) {
	t.Parallel()
	client := start(t)
	p := partOf(0)
	bad := p.once("u2", "", window)
	bad.XAdd = bad.XAdd[:3]
	res := flush(t, client, p.once("u1", "one", window), bad)
	require.Error(t, res[0].Err(), "one script call: one error for all")
	require.Error(t, res[1].Err())

	again := flush(t, client, p.once("u1", "one", window))
	requireOK(t, again)
	msgs := entries(t, client, p.stream)
	assert.Len(t, msgs, 1, "u1 appended once in all")
	assert.True(t, again[0].Duplicate(), "the retry is a duplicate")
}

// TestAppendOnceRefusedBatchKeepsPayloads: in a call of offloaded appends refused at its
// second message, the first keeps its payload key and index member, recorded with its UUID,
// and the refused one leaves no payload key; sent again, the first is a duplicate and the
// second, fixed, is appended with its payload.
func TestAppendOnceRefusedBatchKeepsPayloads(t *testing.T) {
	t.Parallel()
	client := start(t)
	ctx := context.Background()
	p := partOf(0)
	bad := p.onceOffload("u2", "r2", "body-2", 0, window)
	bad.Offload.Fields = bad.Offload.Fields[:len(bad.Offload.Fields)-1] // a field without its value
	res := flush(t, client, p.onceOffload("u1", "r1", "body-1", 0, window), bad)
	require.Error(t, res[0].Err())
	require.Error(t, res[1].Err())
	v, err := payload.Get(ctx, client, p.payloadKey("r1"))
	require.NoError(t, err)
	assert.Equal(t, "body-1", v, "the appended message's payload")
	assert.Zero(t, client.Exists(ctx, p.payloadKey("r2")).Val(), "no payload for the refused one")
	msgs := entries(t, client, p.stream)
	require.Len(t, msgs, 1)
	members, err := client.ZRange(ctx, p.index, 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{msgs[0].ID + "|r1"}, members)

	again := flush(t, client, p.onceOffload("u1", "r1", "body-1", 0, window),
		p.onceOffload("u2", "r2", "body-2", 0, window))
	requireOK(t, again)
	assert.Equal(t, []bool{true, false}, dups(again))
	assert.Equal(t, msgs[0].ID, again[0].StreamID())
	assert.Equal(t, []string{"u1", "u2"}, uuidsOf(entries(t, client, p.stream)))
	v, err = payload.Get(ctx, client, p.payloadKey("r2"))
	require.NoError(t, err)
	assert.Equal(t, "body-2", v)
	assert.Equal(t, int64(2), client.ZCard(ctx, p.index).Val())
}
