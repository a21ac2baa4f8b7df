package importsrc

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// source appends n entries to src and creates group at "0", returning the ids in order.
func source(t *testing.T, rdb *redis.Client, src, group string, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: src, Values: []any{"i", i}}).Result()
		require.NoError(t, err)
		ids[i] = id
	}
	require.NoError(t, rdb.XGroupCreate(ctx, src, group, "0").Err())
	return ids
}

// TestTakeAndBacklog: a group that read 4 of 6 entries and acked 2 stands at the 4th, holds 2
// pending; PendingPage lists them up to a bound, Bodies reads a deleted one as nil, Claim
// moves them (nil for the deleted one), ReadNew takes the 2 undelivered ones, Ack acks.
func TestTakeAndBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	ids := source(t, rdb, "src", "g", 6)
	_, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "old", Streams: []string{"src", ">"}, Count: 4}).Result()
	require.NoError(t, err)
	require.NoError(t, rdb.XAck(ctx, "src", "g", ids[0], ids[2]).Err())

	snap, err := Take(ctx, rdb, "src", "g")
	require.NoError(t, err)
	assert.Equal(t, Snapshot{LastDelivered: ids[3], Pending: 2, Lag: 2, End: ids[5]}, snap)

	page, err := PendingPage(ctx, rdb, "src", "g", Page{After: "", UpTo: snap.LastDelivered, Count: 10})
	require.NoError(t, err)
	require.Len(t, page, 2)
	assert.Equal(t, []string{ids[1], ids[3]}, []string{page[0].ID, page[1].ID})
	assert.Equal(t, "old", page[0].Consumer)
	page, err = PendingPage(ctx, rdb, "src", "g", Page{After: ids[1], UpTo: snap.LastDelivered, Count: 10})
	require.NoError(t, err)
	require.Len(t, page, 1, "after the first")
	page, err = PendingPage(ctx, rdb, "src", "g", Page{After: "", UpTo: ids[2], Count: 10})
	require.NoError(t, err)
	require.Len(t, page, 1, "up to the third")

	require.NoError(t, rdb.XDel(ctx, "src", ids[3]).Err())
	bodies, err := Bodies(ctx, rdb, "src", []string{ids[1], ids[3]})
	require.NoError(t, err)
	assert.Equal(t, "1", bodies[0].Values["i"])
	assert.Nil(t, bodies[1].Values, "deleted while pending")

	claimed, err := Claim(ctx, rdb, "src", "g", "import", []string{ids[1], ids[3]})
	require.NoError(t, err)
	require.Len(t, claimed, 2)
	assert.Equal(t, ids[1], claimed[0].ID)
	assert.NotNil(t, claimed[0].Values)
	assert.Nil(t, claimed[1].Values)

	fresh, err := ReadNew(ctx, rdb, "src", "g", "import", 10)
	require.NoError(t, err)
	require.Len(t, fresh, 2)
	assert.Equal(t, []string{ids[4], ids[5]}, []string{fresh[0].ID, fresh[1].ID})
	none, err := ReadNew(ctx, rdb, "src", "g", "import", 10)
	require.NoError(t, err)
	assert.Empty(t, none)

	after, err := After(ctx, rdb, "src", ids[3], snap.End, 10)
	require.NoError(t, err)
	require.Len(t, after, 2)

	n, err := Ack(ctx, rdb, "src", "g", []string{ids[1], ids[4], ids[5]})
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	snap, err = Take(ctx, rdb, "src", "g")
	require.NoError(t, err)
	assert.Equal(t, int64(0), snap.Pending, "the deleted entry left the pending list when claimed")
	assert.Equal(t, int64(0), snap.Lag)
}

// TestTakeMissing: a missing stream is ErrNoStream, a missing group ErrNoGroup.
func TestTakeMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	_, err := Take(ctx, rdb, "nope", "g")
	require.ErrorIs(t, err, ErrNoStream)
	source(t, rdb, "src", "g", 1)
	_, err = Take(ctx, rdb, "src", "other")
	require.ErrorIs(t, err, ErrNoGroup)
}

// TestRecordIsFencedByTheLock: only the lock's holder records a checkpoint; once its lock
// expired and another import took it, it records nothing (ErrLockLost) and its Unlock leaves
// the new holder's lock alone.
func TestRecordIsFencedByTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	k := KeysFor("streaming:mq", "orders")
	assert.Equal(t, Keys{Lock: "streaming:mq:import:{orders}:lock", Checkpoints: "streaming:mq:import:{orders}:checkpoints"}, k)
	field := Field(Copied, "orders", "payments")
	assert.Equal(t, `copied "orders" "payments"`, field)

	ok, err := Lock(ctx, rdb, k, "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = Lock(ctx, rdb, k, "b", time.Minute)
	require.NoError(t, err)
	require.False(t, ok, "held by a")
	require.NoError(t, Record(ctx, rdb, k, "a", time.Minute, field, "5-0"))
	require.ErrorIs(t, Record(ctx, rdb, k, "b", time.Minute, field, "9-0"), ErrLockLost)
	got, err := Read(ctx, rdb, k, field, Field(Moved, "orders", "payments"))
	require.NoError(t, err)
	assert.Equal(t, []string{"5-0", ""}, got)

	require.NoError(t, rdb.Del(ctx, k.Lock).Err()) // a's lock expired
	ok, err = Lock(ctx, rdb, k, "b", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.ErrorIs(t, Record(ctx, rdb, k, "a", time.Minute, field, "7-0"), ErrLockLost)
	require.NoError(t, Unlock(ctx, rdb, k, "a"))
	held, err := rdb.Get(ctx, k.Lock).Result()
	require.NoError(t, err)
	assert.Equal(t, "b", held)
	require.NoError(t, Unlock(ctx, rdb, k, "b"))
	require.Equal(t, int64(0), rdb.Exists(ctx, k.Lock).Val())
}
