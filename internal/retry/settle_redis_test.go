package retry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// partition0 is the keys of partition 0 of topic "t" for group "g", under the default prefixes.
var partition0 = keys.New("", "").Partition("t", 0, "g", false)

// leased writes the lease of partition0 for token "me" and returns that fence, with the
// partition's stream there, as a lease holder has it (the fenced steps write nothing to a
// stream that is gone).
func leased(t *testing.T, client *redis.Client) fence.Fence {
	t.Helper()
	f := fence.Fence{Key: partition0.Lease, Token: "me"}
	require.NoError(t, client.Set(context.Background(), f.Key, f.Token, time.Minute).Err())
	withStream(t, client, partition0.Stream)
	return f
}

// withStream makes an empty stream, as a group's creation on a partition does.
func withStream(t *testing.T, client *redis.Client, stream string) {
	t.Helper()
	err := client.XGroupCreateMkStream(context.Background(), stream, "setup", "$").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		require.NoError(t, err)
	}
}

// delivered appends n entries to stream, creates group on it from the start and delivers them
// all to one consumer (so they are pending), returning their ids.
func delivered(t *testing.T, client *redis.Client, stream, group string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		id, err := client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"n", string(rune('a' + i))}}).Result()
		require.NoError(t, err)
		ids[i] = id
	}
	require.NoError(t, client.XGroupCreate(ctx, stream, group, "0-0").Err())
	got, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c", Streams: []string{stream, ">"}, Count: int64(n)}).Result()
	require.NoError(t, err)
	require.Len(t, got[0].Messages, n)
	return ids
}

// pendingCount is how many entries of stream group has delivered and not acked.
func pendingCount(t *testing.T, client *redis.Client, stream, group string) int64 {
	t.Helper()
	p, err := client.XPending(context.Background(), stream, group).Result()
	require.NoError(t, err)
	return p.Count
}

// TestRequeueAppendsTheRetryAndAcksTheOriginal: requeue.lua appends the retry's fields as a
// new entry after the original, acks the original for the group (held), and records the retry
// in the group's retry index (its padded id) and retry count; requeuing an entry the group no
// longer holds still appends, but reports it not held.
func TestRequeueAppendsTheRetryAndAcksTheOriginal(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	str, index, count := partition0.Stream, keys.RetryIndex(partition0.Stream, "g"), keys.RetryCount(partition0.Stream)
	ids := delivered(t, client, str, "g", 2)

	newID, held, err := Requeue(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: ids[0]}, []string{"payload", "again", "retry", "1"})
	require.NoError(t, err)
	assert.True(t, held, "the group held the original")
	assert.True(t, streamid.Less(ids[1], newID), "the retry is appended after the last entry")
	last, err := client.XRevRangeN(ctx, str, "+", "-", 1).Result()
	require.NoError(t, err)
	require.Len(t, last, 1)
	assert.Equal(t, newID, last[0].ID)
	assert.Equal(t, map[string]any{"payload": "again", "retry": "1"}, last[0].Values)
	assert.Equal(t, int64(1), pendingCount(t, client, str, "g"), "the original is acked, the other still pending")
	pend, err := client.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: str, Group: "g", Start: "-", End: "+", Count: 10}).Result()
	require.NoError(t, err)
	assert.Equal(t, ids[1], pend[0].ID)
	assert.Equal(t, []string{streamid.Key(newID)}, client.ZRange(ctx, index, 0, -1).Val(), "indexed by its padded id")
	assert.Equal(t, "1", client.HGet(ctx, count, "g").Val())

	again, held, err := Requeue(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: ids[0]}, []string{"payload", "twice"})
	require.NoError(t, err)
	assert.False(t, held, "the original was acked already")
	assert.True(t, streamid.Less(newID, again))
	assert.Equal(t, int64(4), client.XLen(ctx, str).Val(), "appended all the same")
	assert.Equal(t, "2", client.HGet(ctx, count, "g").Val())
	assert.Equal(t, int64(2), client.ZCard(ctx, index).Val())
}

// TestRequeuePrunesTheRetryIndexBelowTheStream: the retry index only keeps retries still in
// the stream: a requeue drops the members below the stream's first entry (trimmed away) and
// keeps the others.
func TestRequeuePrunesTheRetryIndexBelowTheStream(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	str, index := partition0.Stream, keys.RetryIndex(partition0.Stream, "g")
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, ID: "100-0", Values: []string{"k", "v"}}).Err())
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, ID: "200-0", Values: []string{"k", "v"}}).Err())
	require.NoError(t, client.XGroupCreate(ctx, str, "g", "0-0").Err())
	gone, first, kept := streamid.Key("99-5"), streamid.Key("100-0"), streamid.Key("200-0")
	require.NoError(t, client.ZAdd(ctx, index, redis.Z{Member: gone}, redis.Z{Member: first}, redis.Z{Member: kept}).Err())

	newID, _, err := Requeue(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: "100-0"}, []string{"k", "v"})
	require.NoError(t, err)
	assert.Equal(t, []string{first, kept, streamid.Key(newID)}, client.ZRange(ctx, index, 0, -1).Val())
}

// TestRequeueWithoutTheLeaseChangesNothing: a requeue by a token that does not hold the
// partition's lease (another member's, or none left) reports the lease lost, and neither
// appends, nor acks, nor records a retry.
func TestRequeueWithoutTheLeaseChangesNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	str := partition0.Stream
	ids := delivered(t, client, str, "g", 1)

	for name, other := range map[string]fence.Fence{
		"another token": {Key: f.Key, Token: "them"},
		"no lease":      {Key: partition0.Lease + ":none", Token: "me"},
	} {
		_, _, err := Requeue(ctx, client, fence.Entry{Fence: other, Stream: str, Group: "g", ID: ids[0]}, []string{"k", "v"})
		require.ErrorIs(t, err, fence.ErrLeaseLost, name)
	}
	assert.Equal(t, int64(1), client.XLen(ctx, str).Val(), "nothing appended")
	assert.Equal(t, int64(1), pendingCount(t, client, str, "g"), "the original is still pending")
	n, err := client.Exists(ctx, keys.RetryIndex(str, "g"), keys.RetryCount(str)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no retry recorded")
}

// TestScheduleParksTheRetryAndAcksTheOriginal: schedule.lua parks the item in the group's
// retry set at its due time (the blob decodes back to the item), acks the original (held)
// and appends nothing to the stream; scheduling an entry the group no longer holds parks it
// all the same, reporting it not held.
func TestScheduleParksTheRetryAndAcksTheOriginal(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	str, zset, items := partition0.Stream, partition0.Retry, partition0.RetryItems
	ids := delivered(t, client, str, "g", 2)
	due := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
	item, err := NewItem(Origin{Topic: "t", RetryCount: 1, MaxRetries: 5, OriginalID: ids[0], Group: "g"}, map[string]any{"payload": "p"})
	require.NoError(t, err)

	held, err := Schedule(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: ids[0]}, Parked{ZSet: zset, Items: items, ItemID: "item-1", Due: due, Item: item})
	require.NoError(t, err)
	assert.True(t, held)
	assert.Equal(t, []redis.Z{{Score: float64(due.UnixMilli()), Member: "item-1"}}, client.ZRangeWithScores(ctx, zset, 0, -1).Val())
	back, err := DecodeItem(client.HGet(ctx, items, "item-1").Val())
	require.NoError(t, err)
	assert.Equal(t, item, back)
	assert.Equal(t, int64(1), pendingCount(t, client, str, "g"), "the original is acked")
	assert.Equal(t, int64(2), client.XLen(ctx, str).Val(), "nothing appended")

	held, err = Schedule(ctx, client, fence.Entry{Fence: f, Stream: str, Group: "g", ID: ids[0]}, Parked{ZSet: zset, Items: items, ItemID: "item-2", Due: due.Add(time.Second), Item: item})
	require.NoError(t, err)
	assert.False(t, held, "the original was acked already")
	assert.Equal(t, float64(due.Add(time.Second).UnixMilli()), client.ZScore(ctx, zset, "item-2").Val(), "parked all the same")
	assert.Equal(t, int64(2), client.HLen(ctx, items).Val())
}

// TestScheduleWithoutTheLeaseParksNothing: a schedule by a token that does not hold the
// lease reports it lost, parks nothing and leaves the original pending.
func TestScheduleWithoutTheLeaseParksNothing(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	f := leased(t, client)
	str, zset, items := partition0.Stream, partition0.Retry, partition0.RetryItems
	ids := delivered(t, client, str, "g", 1)

	_, err := Schedule(ctx, client, fence.Entry{Fence: fence.Fence{Key: f.Key, Token: "them"}, Stream: str, Group: "g", ID: ids[0]},
		Parked{ZSet: zset, Items: items, ItemID: "item-1", Due: time.Now().Add(time.Hour), Item: Item{Topic: "t", Fields: []string{"k", "v"}}})
	require.ErrorIs(t, err, fence.ErrLeaseLost)
	n, err := client.Exists(ctx, zset, items).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing parked")
	assert.Equal(t, int64(1), pendingCount(t, client, str, "g"), "the original is still pending")
}

// TestParkParksADelayedMessage: park.lua, queued on a pipeline once LoadScripts cached it
// (EVALSHA; a server that does not have it answers NOSCRIPT), parks a delayed message in the
// partition's delay set at its due time; parking the same item again moves its due time.
func TestParkParksADelayedMessage(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	zset, items := partition0.Delay, partition0.DelayItems
	item := Item{Topic: "t", PartitionID: "0", Fields: []string{"payload", "later"}}
	due := time.UnixMilli(time.Now().Add(time.Minute).UnixMilli())
	park := func(at time.Time) (*redis.Cmd, error) {
		pipe := client.Pipeline()
		cmd, err := Park{ZSet: zset, Items: items, ID: "item-1", Due: at, Item: item}.Cmd(ctx, pipe)
		require.NoError(t, err)
		_, err = pipe.Exec(ctx)
		return cmd, err
	}

	_, err := park(due)
	require.Error(t, err, "not loaded yet")
	assert.True(t, redis.HasErrorPrefix(err, "NOSCRIPT"), "%v", err)
	assert.Zero(t, client.Exists(ctx, zset, items).Val())

	require.NoError(t, LoadScripts(ctx, client))
	cmd, err := park(due)
	require.NoError(t, err)
	assert.Equal(t, int64(1), cmd.Val())
	assert.Equal(t, float64(due.UnixMilli()), client.ZScore(ctx, zset, "item-1").Val())
	back, err := DecodeItem(client.HGet(ctx, items, "item-1").Val())
	require.NoError(t, err)
	assert.Equal(t, item, back)

	_, err = park(due.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []redis.Z{{Score: float64(due.Add(time.Hour).UnixMilli()), Member: "item-1"}},
		client.ZRangeWithScores(ctx, zset, 0, -1).Val())
}
