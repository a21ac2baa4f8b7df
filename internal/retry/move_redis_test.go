package retry

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// retrySet is group "g"'s retry set of partition0, delaySet partition0's delay set.
var (
	retrySet = Set{ZSet: partition0.Retry, Items: partition0.RetryItems, Stream: partition0.Stream, Group: "g"}
	delaySet = Set{ZSet: partition0.Delay, Items: partition0.DelayItems, Stream: partition0.Stream}
)

// put parks blob in set as item id, due at due, directly (no script).
func put(t *testing.T, client *redis.Client, set Set, id string, due time.Time, blob string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.HSet(ctx, set.Items, id, blob).Err())
	require.NoError(t, client.ZAdd(ctx, set.ZSet, redis.Z{Score: float64(due.UnixMilli()), Member: id}).Err())
}

// putItem parks, as id, an item of topic "t" on partition p whose one field "n" is id.
func putItem(t *testing.T, client *redis.Client, set Set, id, p string, due time.Time) {
	t.Helper()
	blob, err := Item{Topic: "t", PartitionID: p, RetryCount: "1", Fields: []string{"n", id}}.Encode()
	require.NoError(t, err)
	put(t, client, set, id, due, blob)
}

// ns returns the "n" field of each entry of stream, oldest first.
func ns(t *testing.T, client *redis.Client, stream string) []string {
	t.Helper()
	msgs, err := client.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		s, _ := m.Values["n"].(string)
		out = append(out, s)
	}
	return out
}

// parked is the ids of set's zset, by due time, after checking its items hash holds the same.
func parked(t *testing.T, client *redis.Client, set Set) []string {
	t.Helper()
	ctx := context.Background()
	ids := client.ZRange(ctx, set.ZSet, 0, -1).Val()
	assert.ElementsMatch(t, ids, client.HKeys(ctx, set.Items).Val(), "zset and items hash agree")
	return ids
}

// TestMoveTakesOnlyDueItems: move.lua appends the items of a delay set that are due (on
// Redis's clock) to the partition in due order, removes them from the set, leaves the items
// due later where they are, and reports the next due time.
func TestMoveTakesOnlyDueItems(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	now := time.Now()
	putItem(t, client, delaySet, "late", "0", now.Add(-time.Hour))
	putItem(t, client, delaySet, "early", "0", now.Add(-3*time.Hour))
	putItem(t, client, delaySet, "mid", "0", now.Add(-2*time.Hour))
	putItem(t, client, delaySet, "future", "0", now.Add(time.Hour))
	putItem(t, client, delaySet, "later", "0", now.Add(2*time.Hour))

	m, err := Move(ctx, client, f, delaySet, 10)
	require.NoError(t, err)
	assert.Equal(t, 3, m.Moved)
	assert.Zero(t, m.Dropped)
	assert.Empty(t, m.HandedBack)
	assert.Equal(t, now.Add(time.Hour).UnixMilli(), m.NextDue.UnixMilli(), "the earliest item left")
	assert.Equal(t, []string{"early", "mid", "late"}, ns(t, client, partition0.Stream), "appended in due order")
	assert.Equal(t, []string{"future", "later"}, parked(t, client, delaySet))
	n, err := client.Exists(ctx, keys.RetryIndex(partition0.Stream, "g"), keys.RetryCount(partition0.Stream)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a delay set's messages are no retries")

	m, err = Move(ctx, client, f, delaySet, 10)
	require.NoError(t, err)
	assert.Equal(t, Moved{NextDue: m.NextDue}, m, "nothing more is due")
	assert.Equal(t, now.Add(time.Hour).UnixMilli(), m.NextDue.UnixMilli())
}

// TestMoveTakesAtMostTheBatch: one move appends at most its limit of due items, the earliest
// first, reporting the earliest of the rest (due already) as next; the next move goes on, and
// a move of the emptied set reports no next due time.
func TestMoveTakesAtMostTheBatch(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	now := time.Now()
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		putItem(t, client, delaySet, id, "0", now.Add(time.Duration(i-10)*time.Minute))
	}

	m, err := Move(ctx, client, f, delaySet, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Moved)
	assert.Equal(t, now.Add(-8*time.Minute).UnixMilli(), m.NextDue.UnixMilli(), "c is due, and next")
	assert.Equal(t, []string{"a", "b"}, ns(t, client, partition0.Stream))
	assert.Equal(t, []string{"c", "d", "e"}, parked(t, client, delaySet))

	m, err = Move(ctx, client, f, delaySet, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Moved)
	m, err = Move(ctx, client, f, delaySet, 2)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Moved)
	assert.True(t, m.NextDue.IsZero(), "the set is empty")
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, ns(t, client, partition0.Stream))
	assert.Zero(t, client.Exists(ctx, delaySet.ZSet, delaySet.Items).Val())
}

// TestMoveIndexesAndCountsTheRetriesOfARetrySet: the retries a move appends from a group's
// retry set are recorded in the group's retry index (padded ids) and count, and the index
// loses its members below the stream's first entry.
func TestMoveIndexesAndCountsTheRetriesOfARetrySet(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	index, count := keys.RetryIndex(partition0.Stream, "g"), keys.RetryCount(partition0.Stream)
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: partition0.Stream, ID: "100-0", Values: []string{"n", "old"}}).Err())
	stale, kept := streamid.Key("99-0"), streamid.Key("100-0")
	require.NoError(t, client.ZAdd(ctx, index, redis.Z{Member: stale}, redis.Z{Member: kept}).Err())
	require.NoError(t, client.HSet(ctx, count, "g", 4, "other", 7).Err())
	putItem(t, client, retrySet, "r1", "0", time.Now().Add(-time.Second))
	putItem(t, client, retrySet, "r2", "0", time.Now().Add(-time.Millisecond))

	m, err := Move(ctx, client, f, retrySet, 10)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Moved)
	msgs, err := client.XRange(ctx, partition0.Stream, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	assert.Equal(t, []string{kept, streamid.Key(msgs[1].ID), streamid.Key(msgs[2].ID)}, client.ZRange(ctx, index, 0, -1).Val())
	assert.Equal(t, map[string]string{"g": "6", "other": "7"}, client.HGetAll(ctx, count).Val())
}

// TestMoveHandsBackItemsOfOtherPartitions: an item whose partition is another one is not
// appended here but handed back with its partition and fields, still parked (Forget removes
// it once the caller appended it); a partition id that is no non-negative integer reads as 0.
func TestMoveHandsBackItemsOfOtherPartitions(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	past := time.Now().Add(-time.Minute)
	putItem(t, client, delaySet, "mine", "0", past)
	putItem(t, client, delaySet, "bad-is-0", "abc", past.Add(time.Millisecond))
	putItem(t, client, delaySet, "negative-is-0", "-3", past.Add(2*time.Millisecond))
	putItem(t, client, delaySet, "fraction-is-0", "1.5", past.Add(3*time.Millisecond))
	putItem(t, client, delaySet, "two", "2", past.Add(4*time.Millisecond))

	m, err := Move(ctx, client, f, delaySet, 10)
	require.NoError(t, err)
	assert.Equal(t, 4, m.Moved)
	assert.Equal(t, []Handed{{ID: "two", Partition: 2, Values: map[string]any{"n": "two"}}}, m.HandedBack)
	assert.Equal(t, past.Add(4*time.Millisecond).UnixMilli(), m.NextDue.UnixMilli(), "the handed back item is still first")
	assert.Equal(t, []string{"mine", "bad-is-0", "negative-is-0", "fraction-is-0"}, ns(t, client, partition0.Stream))
	assert.Equal(t, []string{"two"}, parked(t, client, delaySet))

	require.NoError(t, Forget(ctx, client, delaySet, "two"))
	assert.Zero(t, client.Exists(ctx, delaySet.ZSet, delaySet.Items).Val())

	// On partition 1, the same bad ids belong to partition 0.
	one := keys.New("", "").Partition("t", 1, "g", false)
	set := Set{ZSet: one.Delay, Items: one.DelayItems, Stream: one.Stream, Partition: 1}
	f1 := fence.Fence{Key: one.Lease, Token: "me"}
	require.NoError(t, client.Set(ctx, f1.Key, f1.Token, time.Minute).Err())
	withStream(t, client, one.Stream)
	putItem(t, client, set, "bad", "abc", past)
	putItem(t, client, set, "one", "1", past.Add(time.Millisecond))
	m, err = Move(ctx, client, f1, set, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Moved)
	assert.Equal(t, []Handed{{ID: "bad", Partition: 0, Values: map[string]any{"n": "bad"}}}, m.HandedBack)
	assert.Equal(t, []string{"one"}, ns(t, client, one.Stream))
}

// TestMoveDropsUnusableItems: due items the mover cannot append (no blob, a blob that is no
// msgpack map, no topic, no fields, an odd number of fields, a field that is no string or
// number, fields XADD refuses) are removed and counted as dropped, without stopping the
// usable items; numbers are appended as their decimal text.
func TestMoveDropsUnusableItems(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	past := time.Now().Add(-time.Minute)
	raw := func(v any) string {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	bad := map[string]string{
		"garbage":   "\xc1 not msgpack",
		"not a map": raw([]string{"topic", "t"}),
		"no topic":  raw(map[string]any{"partitionId": "0", "fields": []string{"n", "x"}}),
		"empty":     raw(map[string]any{"topic": "", "fields": []string{"n", "x"}}),
		"no fields": raw(map[string]any{"topic": "t", "partitionId": "0", "fields": []string{}}),
		"odd":       raw(map[string]any{"topic": "t", "partitionId": "0", "fields": []string{"n"}}),
		"nested":    raw(map[string]any{"topic": "t", "partitionId": "0", "fields": []any{"n", []string{"x"}}}),
	}
	for id, blob := range bad {
		put(t, client, delaySet, id, past, blob)
	}
	require.NoError(t, client.ZAdd(ctx, delaySet.ZSet, redis.Z{Score: float64(past.UnixMilli()), Member: "no blob"}).Err())
	put(t, client, delaySet, "number", past.Add(time.Millisecond),
		raw(map[string]any{"topic": "t", "partitionId": 0, "fields": []any{"n", 42}}))
	putItem(t, client, delaySet, "good", "0", past.Add(2*time.Millisecond))

	m, err := Move(ctx, client, f, delaySet, 20)
	require.NoError(t, err)
	assert.Equal(t, len(bad)+1, m.Dropped)
	assert.Equal(t, 2, m.Moved)
	assert.True(t, m.NextDue.IsZero())
	assert.Equal(t, []string{"42", "good"}, ns(t, client, partition0.Stream))
	assert.Empty(t, parked(t, client, delaySet))

	// A partition key that is no stream makes XADD refuse every item: they are dropped.
	wrong := Set{ZSet: delaySet.ZSet, Items: delaySet.Items, Stream: partition0.Stream + ":string"}
	require.NoError(t, client.Set(ctx, wrong.Stream, "x", 0).Err())
	putItem(t, client, wrong, "refused", "0", past)
	m, err = Move(ctx, client, f, wrong, 20)
	require.NoError(t, err)
	assert.Equal(t, Moved{Dropped: 1}, m)
	assert.Empty(t, parked(t, client, wrong))
}

// TestMoveWithoutTheLeaseMovesNothing: a move by a token that does not hold the partition's
// lease (another member's, or none) reports the lease lost and leaves the set and the
// stream as they were.
func TestMoveWithoutTheLeaseMovesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	putItem(t, client, retrySet, "due", "0", time.Now().Add(-time.Minute))

	for name, other := range map[string]fence.Fence{
		"another token": {Key: f.Key, Token: "them"},
		"no lease":      {Key: partition0.Lease + ":none", Token: "me"},
	} {
		_, err := Move(ctx, client, other, retrySet, 10)
		require.ErrorIs(t, err, fence.ErrLeaseLost, name)
	}
	assert.Equal(t, []string{"due"}, parked(t, client, retrySet))
	n, err := client.Exists(ctx, keys.RetryIndex(partition0.Stream, "g"), keys.RetryCount(partition0.Stream)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing counted")
	assert.Empty(t, ns(t, client, partition0.Stream), "nothing appended")

	m, err := Move(ctx, client, f, retrySet, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Moved, "the lease holder moves it")
}

// TestMoveReadsPartitionIdsAsItemPartitionDoes: Handed.Partition is "the seed's reading of its
// partitionId: anything bad is 0", which Item.Partition implements (anything but a non-negative
// decimal int is 0); move.lua must send each item where that reading does. On partition 1,
// every id below reads as 0: each must be handed back for partition 0, none appended here.
func TestMoveReadsPartitionIdsAsItemPartitionDoes(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	one := keys.New("", "").Partition("t", 1, "g", false)
	set := Set{ZSet: one.Delay, Items: one.DelayItems, Stream: one.Stream, Partition: 1}
	f := fence.Fence{Key: one.Lease, Token: "me"}
	require.NoError(t, client.Set(ctx, f.Key, f.Token, time.Minute).Err())
	withStream(t, client, one.Stream)
	ids := []string{"99999999999999999999999", "inf", "0x1", "1e0", " 1", "1.0"}
	past := time.Now().Add(-time.Minute)
	for i, id := range ids {
		require.Zero(t, Item{PartitionID: id}.Partition(), "the Go reading of %q", id)
		putItem(t, client, set, id, id, past.Add(time.Duration(i)*time.Millisecond))
	}

	m, err := Move(ctx, client, f, set, 10)
	require.NoError(t, err)
	got := map[string]int{}
	for _, h := range m.HandedBack {
		got[h.ID] = h.Partition
	}
	for _, id := range ns(t, client, one.Stream) {
		got[id] = 1
	}
	for _, id := range ids {
		assert.Equal(t, 0, got[id], "partition id %q", id)
	}
}

// TestMoveToADeletedStreamWritesNothing: after an operator deleted the partition's stream (a
// forced DeleteTopic) under its lease holder, a move reports the lease lost and neither the
// stream nor its retry index and count come back; the items stay parked.
func TestMoveToADeletedStreamWritesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	putItem(t, client, retrySet, "due", "0", time.Now().Add(-time.Minute))
	require.NoError(t, client.Del(ctx, partition0.Stream).Err())

	_, err := Move(ctx, client, f, retrySet, 10)
	require.ErrorIs(t, err, fence.ErrLeaseLost)
	n, err := client.Exists(ctx, partition0.Stream, keys.RetryIndex(partition0.Stream, "g"), keys.RetryCount(partition0.Stream)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the deleted partition did not come back")
	assert.Equal(t, []string{"due"}, parked(t, client, retrySet))
}
