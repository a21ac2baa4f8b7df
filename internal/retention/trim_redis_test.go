package retention_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retention"
)

// part names the stream and trim-loss hash of partition i of topic "t".
func part(i int) (stream, loss string) {
	s := keys.New("", "")
	return s.PartitionStream("t", i), s.TrimLoss("t", i)
}

// fill appends entries with ids "from-0" to "to-0" (ms from to to) to stream, in one pipeline.
func fill(t *testing.T, client *redis.Client, stream string, from, to int) {
	t.Helper()
	ctx := context.Background()
	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for ms := from; ms <= to; ms++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id(ms), Values: []string{"k", "v"}})
		}
		return nil
	})
	require.NoError(t, err)
}

// id is the stream id "ms-0".
func id(ms int) string { return strconv.Itoa(ms) + "-0" }

// position creates group on stream from the start, delivers it the entries up to "delivered-0"
// and acks those up to "acked-0" but the ones of unacked: it then needs the first unacked one.
func position(t *testing.T, client *redis.Client, stream, group string, delivered, acked int, unacked ...int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.XGroupCreate(ctx, stream, group, "0-0").Err())
	if delivered > 0 {
		got, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: "c", Streams: []string{stream, ">"}, Count: int64(delivered),
		}).Result()
		require.NoError(t, err)
		require.Len(t, got[0].Messages, delivered)
	}
	skip := map[int]bool{}
	for _, ms := range unacked {
		skip[ms] = true
	}
	var ids []string
	for ms := 1; ms <= acked; ms++ {
		if !skip[ms] {
			ids = append(ids, id(ms))
		}
	}
	if len(ids) > 0 {
		require.NoError(t, client.XAck(ctx, stream, group, ids...).Err())
	}
}

// first is the id of stream's oldest entry, "" when it is empty.
func first(t *testing.T, client *redis.Client, stream string) string {
	t.Helper()
	msgs, err := client.XRangeN(context.Background(), stream, "-", "+", 1).Result()
	require.NoError(t, err)
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].ID
}

// TestTrimByLengthStopsAtWhatAGroupNeeds: a length trim of 10 entries to 2 (exact, default
// policy) removes only entries every group was delivered and acked: it stops at the oldest
// entry some group has pending or was not delivered, whichever group is slowest; nothing is
// counted lost.
func TestTrimByLengthStopsAtWhatAGroupNeeds(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		groups func(t *testing.T, stream string)
		first  string // the oldest entry left
	}{
		{name: "no group", groups: func(*testing.T, string) {}, first: id(9)},
		{name: "caught up", groups: func(t *testing.T, s string) { position(t, client, s, "a", 10, 10) }, first: id(9)},
		{name: "pending", groups: func(t *testing.T, s string) { position(t, client, s, "a", 10, 4) }, first: id(5)},
		{name: "an older one pending", groups: func(t *testing.T, s string) { position(t, client, s, "a", 10, 10, 3) }, first: id(3)},
		{name: "not delivered", groups: func(t *testing.T, s string) { position(t, client, s, "a", 6, 6) }, first: id(7)},
		{name: "the slowest group", groups: func(t *testing.T, s string) {
			position(t, client, s, "a", 10, 10)
			position(t, client, s, "b", 6, 6)
			position(t, client, s, "c", 8, 8)
		}, first: id(7)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, loss := part(i)
			fill(t, client, stream, 1, 10)
			tt.groups(t, stream)
			res, err := retention.Trim(ctx, client, stream, loss, retention.Rule{MaxLen: 2, Exact: true, Now: time.Now()})
			require.NoError(t, err)
			assert.Equal(t, tt.first, first(t, client, stream))
			assert.Equal(t, retention.Trimmed{Removed: 10 - client.XLen(ctx, stream).Val()}, res, "removed, none unacked")
			assert.Zero(t, client.Exists(ctx, loss).Val(), "no loss recorded")
		})
	}

	stream, loss := part(len(tests))
	fill(t, client, stream, 1, 10)
	res, err := retention.Trim(ctx, client, stream, loss, retention.Rule{MaxLen: 10, Exact: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{}, res, "within the length")
	assert.Equal(t, int64(10), client.XLen(ctx, stream).Val())
}

// TestTrimByAgeStopsAtWhatAGroupNeeds: an age trim removes the entries older than Before
// (ids below its ms), exact, but none a group still needs.
func TestTrimByAgeStopsAtWhatAGroupNeeds(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		before int // ms
		groups func(t *testing.T, stream string)
		first  string
	}{
		{name: "no group", before: 8, groups: func(*testing.T, string) {}, first: id(8)},
		{name: "caught up", before: 8, groups: func(t *testing.T, s string) { position(t, client, s, "a", 10, 10) }, first: id(8)},
		{name: "pending", before: 8, groups: func(t *testing.T, s string) {
			position(t, client, s, "a", 10, 10)
			position(t, client, s, "b", 10, 10, 5)
		}, first: id(5)},
		{name: "not delivered", before: 8, groups: func(t *testing.T, s string) { position(t, client, s, "a", 3, 3) }, first: id(4)},
		{name: "nothing that old", before: 1, groups: func(*testing.T, string) {}, first: id(1)},
		{name: "everything", before: 11, groups: func(*testing.T, string) {}, first: ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, loss := part(i)
			fill(t, client, stream, 1, 10)
			tt.groups(t, stream)
			rule := retention.Rule{Before: time.UnixMilli(int64(tt.before)), Exact: true, Now: time.Now()}
			res, err := retention.Trim(ctx, client, stream, loss, rule)
			require.NoError(t, err)
			assert.Equal(t, tt.first, first(t, client, stream))
			assert.Equal(t, retention.Trimmed{Removed: 10 - client.XLen(ctx, stream).Val()}, res)
			assert.Zero(t, client.Exists(ctx, loss).Val())
		})
	}
}

// TestTrimApproximateRemovesWholeNodes: without Exact, length and age trims remove whole
// macro nodes only (10 entries each here), keeping the rest of the node the threshold or a
// group's position falls in; Exact trims to the entry.
func TestTrimApproximateRemovesWholeNodes(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "stream-node-max-entries", "10").Err())
	tests := []struct {
		name   string
		rule   retention.Rule
		needs  int // the entry a group needs; 0: no group
		remain int64
	}{
		{name: "length, no group", rule: retention.Rule{MaxLen: 12}, remain: 15},
		{name: "length, exact, no group", rule: retention.Rule{MaxLen: 12, Exact: true}, remain: 12},
		{name: "length, caught up", rule: retention.Rule{MaxLen: 12}, needs: 36, remain: 15},
		{name: "length, exact, caught up", rule: retention.Rule{MaxLen: 12, Exact: true}, needs: 36, remain: 12},
		{name: "length, group in a node", rule: retention.Rule{MaxLen: 12}, needs: 16, remain: 25},
		{name: "length, exact, group in a node", rule: retention.Rule{MaxLen: 12, Exact: true}, needs: 16, remain: 20},
		{name: "age, no group", rule: retention.Rule{Before: time.UnixMilli(25)}, remain: 15},
		{name: "age, exact, no group", rule: retention.Rule{Before: time.UnixMilli(25), Exact: true}, remain: 11},
		{name: "age, group in a node", rule: retention.Rule{Before: time.UnixMilli(30)}, needs: 16, remain: 25},
		{name: "age, exact, group in a node", rule: retention.Rule{Before: time.UnixMilli(30), Exact: true}, needs: 16, remain: 20},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, loss := part(i)
			fill(t, client, stream, 1, 35)
			if tt.needs > 0 {
				position(t, client, stream, "a", tt.needs-1, tt.needs-1)
			}
			tt.rule.Now = time.Now()
			res, err := retention.Trim(ctx, client, stream, loss, tt.rule)
			require.NoError(t, err)
			assert.Equal(t, tt.remain, client.XLen(ctx, stream).Val())
			assert.Equal(t, retention.Trimmed{Removed: 35 - tt.remain}, res)
		})
	}
}

// TestTrimHardCountsWhatItRemovesUnacked: under the hard policy a length trim removes down to
// MaxLen whatever the groups need, counting per group the entries it had pending or was not
// delivered (total and new), and as Unacked the distinct such entries; TakeLosses takes the
// new count once, Losses keeps the total.
func TestTrimHardCountsWhatItRemovesUnacked(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	stream, loss := part(0)
	fill(t, client, stream, 1, 10)
	position(t, client, stream, "a", 6, 3) // pending 4..6, 7..10 not delivered
	position(t, client, stream, "b", 10, 10, 5)
	position(t, client, stream, "c", 10, 10)
	rule := retention.Rule{MaxLen: 2, Exact: true, Hard: true, Now: time.Now()}

	res, err := retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Removed: 8, Unacked: 5}, res, "4..8 some group had not acked")
	assert.Equal(t, id(9), first(t, client, stream))
	losses, err := retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"a": 5, "b": 1}, losses)

	n, err := retention.TakeLosses(ctx, client, loss, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)
	n, err = retention.TakeLosses(ctx, client, loss, "a")
	require.NoError(t, err)
	assert.Zero(t, n, "taken")

	fill(t, client, stream, 11, 13)
	res, err = retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Removed: 3, Unacked: 3}, res, "9..11: a was not delivered them, nor b and c 11")
	n, err = retention.TakeLosses(ctx, client, loss, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "new since the last take")
	losses, err = retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"a": 8, "b": 2, "c": 1}, losses, "totals stay")
	n, err = retention.TakeLosses(ctx, client, loss, "b")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "never taken: both trims")
}

// TestTrimHardByAgeGoesOnInChunks: a hard age trim past HardChunk entries removes them all in
// rounds of HardChunk (one Trim), counting each as lost to the group that was delivered none;
// the default policy removes none of them.
func TestTrimHardByAgeGoesOnInChunks(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	stream, loss := part(0)
	const n = 2*retention.HardChunk + 7
	fill(t, client, stream, 1, n)
	position(t, client, stream, "g", 0, 0)
	rule := retention.Rule{Before: time.UnixMilli(n + 1), Now: time.Now()}

	res, err := retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{}, res, "the group needs them all")

	rule.Hard = true
	res, err = retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Removed: n, Unacked: n}, res)
	assert.Zero(t, client.XLen(ctx, stream).Val())
	losses, err := retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"g": n}, losses)
}

// TestTrimAckedRemovesWholeNodesEveryGroupAcked: the acked rule (Redis short of memory)
// removes the whole macro nodes below the slowest group's need, whatever is left and whatever
// else the rule says (no hard trimming, no loss), still waiting for an expired group (which
// it reports); with no group it removes nothing.
func TestTrimAckedRemovesWholeNodesEveryGroupAcked(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "stream-node-max-entries", "10").Err())
	now := time.Now()
	rule := retention.Rule{Acked: true, MaxLen: 1, Exact: true, Hard: true, GroupExpiry: time.Minute, Now: now}

	stream, loss := part(0)
	fill(t, client, stream, 1, 35)
	position(t, client, stream, "a", 25, 25)
	position(t, client, stream, "b", 35, 35, 29, 30)
	res, err := retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Removed: 20}, res, "nodes 1..10 and 11..20; a needs 26")
	assert.Equal(t, id(21), first(t, client, stream))
	assert.Zero(t, client.Exists(ctx, loss).Val())

	stream, loss = part(1)
	fill(t, client, stream, 1, 35)
	res, err = retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{}, res, "no group: nothing")
	assert.Equal(t, int64(35), client.XLen(ctx, stream).Val())

	stream, loss = part(2)
	fill(t, client, stream, 1, 35)
	position(t, client, stream, "a", 35, 35)
	position(t, client, stream, "gone", 0, 0)
	require.NoError(t, client.HSet(ctx, keys.GroupSeen(stream), keys.SeenField("gone"), now.Add(-time.Hour).UnixMilli()).Err())
	res, err = retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Expired: []string{"gone"}}, res, "an expired group is waited for")
	assert.Equal(t, int64(35), client.XLen(ctx, stream).Val())
}

// TestTrimByAgeLeavesAnExpiredGroupOut: with a group expiry, an age trim (default policy)
// goes past a group not seen for longer, as far as the live groups let it, counting what the
// expired group lost (pending or not delivered); when every group expired it goes as far as
// the rule says.
func TestTrimByAgeLeavesAnExpiredGroupOut(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	now := time.Now()
	rule := retention.Rule{Before: time.UnixMilli(100), Exact: true, GroupExpiry: time.Minute, Now: now}
	seenAgo := func(stream, group string, ago time.Duration) {
		require.NoError(t, client.HSet(ctx, keys.GroupSeen(stream), keys.SeenField(group), now.Add(-ago).UnixMilli()).Err())
	}

	stream, loss := part(0)
	fill(t, client, stream, 1, 10)
	position(t, client, stream, "live", 5, 5)
	position(t, client, stream, "gone", 3, 1) // pending 2, 3
	seenAgo(stream, "live", time.Second)
	seenAgo(stream, "gone", 2*time.Minute)
	res, err := retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{Removed: 5, Unacked: 4, Expired: []string{"gone"}}, res, "up to live's 6; gone lacked 2..5")
	assert.Equal(t, id(6), first(t, client, stream))
	losses, err := retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"gone": 4}, losses)

	stream, loss = part(1)
	fill(t, client, stream, 1, 10)
	position(t, client, stream, "live", 5, 5)
	position(t, client, stream, "gone", 3, 1)
	seenAgo(stream, "live", 2*time.Minute)
	seenAgo(stream, "gone", 2*time.Minute)
	res, err = retention.Trim(ctx, client, stream, loss, rule)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"gone", "live"}, res.Expired)
	assert.Equal(t, int64(10), res.Removed, "every group expired: all older than Before")
	assert.Equal(t, int64(9), res.Unacked, "2..10; 1 both acked")
	losses, err = retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"gone": 9, "live": 5}, losses)
}

// TestMarkSeenHoldsRetentionBackAgain: a group marked live within the expiry holds a trim
// back; once not seen for longer a trim goes past it (reporting it); marked live again (which
// reports since when it was left out) it holds retention back again, until it expires anew.
func TestMarkSeenHoldsRetentionBackAgain(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	stream, loss := part(0)
	fill(t, client, stream, 1, 10)
	position(t, client, stream, "g", 0, 0)
	t0 := time.UnixMilli(time.Now().UnixMilli())
	trim := func(at time.Time) retention.Trimmed {
		res, err := retention.Trim(ctx, client, stream, loss, retention.Rule{MaxLen: 2, Exact: true, GroupExpiry: time.Minute, Now: at})
		require.NoError(t, err)
		return res
	}

	since, err := retention.MarkSeen(ctx, client, stream, "g", t0)
	require.NoError(t, err)
	assert.True(t, since.IsZero())
	seen, err := retention.ReadSeen(ctx, client, []string{stream})
	require.NoError(t, err)
	assert.Equal(t, map[string]retention.Seen{"g": {LastSeen: t0}}, seen[0])

	assert.Equal(t, retention.Trimmed{}, trim(t0.Add(time.Minute)), "seen a minute ago: not expired")
	assert.Equal(t, retention.Trimmed{Removed: 8, Unacked: 8, Expired: []string{"g"}}, trim(t0.Add(time.Minute+time.Millisecond)))

	fill(t, client, stream, 11, 18)
	back := t0.Add(2 * time.Minute)
	since, err = retention.MarkSeen(ctx, client, stream, "g", back)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Minute+time.Millisecond), since, "left out since that trim")
	assert.Equal(t, retention.Trimmed{}, trim(back.Add(30*time.Second)), "live again")
	assert.Equal(t, int64(10), client.XLen(ctx, stream).Val())
	assert.Equal(t, retention.Trimmed{Removed: 8, Unacked: 8, Expired: []string{"g"}}, trim(back.Add(2*time.Minute)), "expired anew")
}

// TestTrimWithoutARuleOrEntries: a rule with neither length nor age, or a stream with no
// entries, removes nothing and reports nothing.
func TestTrimWithoutARuleOrEntries(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	stream, loss := part(0)
	fill(t, client, stream, 1, 3)
	res, err := retention.Trim(ctx, client, stream, loss, retention.Rule{Exact: true, Hard: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, retention.Trimmed{}, res)
	assert.Equal(t, int64(3), client.XLen(ctx, stream).Val())

	gone, _ := part(1)
	for _, rule := range []retention.Rule{{MaxLen: 1, Hard: true}, {Before: time.Now(), Hard: true}, {Acked: true}} {
		res, err = retention.Trim(ctx, client, gone, loss, rule)
		require.NoError(t, err)
		assert.Equal(t, retention.Trimmed{}, res)
	}
	assert.Zero(t, client.Exists(ctx, gone, keys.GroupSeen(gone), loss).Val(), "nothing written")
}

// TestTrimHardCountsOnlyEntriesItRemoves: entries deleted (XDEL, e.g. the immediate ack-delete
// policy on another group's ack) while still pending for a group stay in its pending list; a
// hard trim over their range must count only the entries it removes, so Unacked is never more
// than Removed and each group's loss is what it lost.
func TestTrimHardCountsOnlyEntriesItRemoves(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	stream, loss := part(0)
	fill(t, client, stream, 1, 6)
	position(t, client, stream, "a", 5, 0)                                  // pending 1..5
	position(t, client, stream, "b", 5, 1)                                  // pending 2..5
	require.NoError(t, client.XDel(ctx, stream, id(2), id(3), id(4)).Err()) // left: 1, 5, 6

	res, err := retention.Trim(ctx, client, stream, loss, retention.Rule{MaxLen: 1, Exact: true, Hard: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, id(6), first(t, client, stream))
	assert.Equal(t, retention.Trimmed{Removed: 2, Unacked: 2}, res, "1 and 5 were unacked")
	losses, err := retention.Losses(ctx, client, loss)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"a": 2, "b": 1}, losses)
}
