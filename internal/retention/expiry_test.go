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

// TestTrimGroupExpiry: trim.lua with a group expiry, on a stream of 10 entries kept to 2,
// group "live" caught up and group "gone" at the start, "gone" last seen seenAgo before now.
func TestTrimGroupExpiry(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	now := time.Now()
	tests := []struct {
		name     string
		seenAgo  time.Duration // 0: no record of "gone"
		expiry   time.Duration
		wantLen  int64
		wantLost string // "gone"'s total:gone, "" none
		expired  []string
	}{
		{name: "no record: seen from now on", expiry: time.Minute, wantLen: 10},
		{name: "seen within the expiry", seenAgo: 30 * time.Second, expiry: time.Minute, wantLen: 10},
		{name: "expired", seenAgo: 2 * time.Minute, expiry: time.Minute, wantLen: 2, wantLost: "8", expired: []string{"gone"}},
		{name: "expiry off", seenAgo: 2 * time.Minute, wantLen: 10},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream, loss := "s:{t:p:"+strconv.Itoa(i)+"}", "l:{t:p:"+strconv.Itoa(i)+"}"
			seed(t, client, stream)
			if tt.seenAgo > 0 {
				require.NoError(t, client.HSet(ctx, keys.GroupSeen(stream), keys.SeenField("gone"), now.Add(-tt.seenAgo).UnixMilli()).Err())
			}
			rule := retention.Rule{MaxLen: 2, Exact: true, GroupExpiry: tt.expiry, Now: now}
			res, err := retention.Trim(ctx, client, stream, loss, rule)
			require.NoError(t, err)
			assert.Equal(t, tt.expired, res.Expired)
			assert.Equal(t, tt.wantLen, client.XLen(ctx, stream).Val())
			assert.Equal(t, tt.wantLost, client.HGet(ctx, loss, "total:gone").Val())
			assert.Empty(t, client.HGet(ctx, loss, "total:live").Val())
			seen := client.HGetAll(ctx, keys.GroupSeen(stream)).Val()
			assert.Contains(t, seen, keys.SeenField("gone"), "every group has a record after a trim")
			assert.Contains(t, seen, keys.SeenField("live"))

			again, err := retention.Trim(ctx, client, stream, loss, rule)
			require.NoError(t, err)
			assert.Empty(t, again.Expired, "an expiry is reported once")
		})
	}
}

// TestMarkSeen: a group marked live is no longer expired, and MarkSeen says since when it was.
func TestMarkSeen(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const stream = "s:{t:p:0}"
	seed(t, client, stream)
	now := time.Now()
	require.NoError(t, client.HSet(ctx, keys.GroupSeen(stream), keys.SeenField("gone"), now.Add(-time.Hour).UnixMilli()).Err())
	rule := retention.Rule{MaxLen: 2, Exact: true, GroupExpiry: time.Minute, Now: now}
	_, err := retention.Trim(ctx, client, stream, "l:{t:p:0}", rule)
	require.NoError(t, err)
	before, err := retention.ReadSeen(ctx, client, []string{stream})
	require.NoError(t, err)
	assert.Equal(t, now.UnixMilli(), before[0]["gone"].ExpiredSince.UnixMilli())

	since, err := retention.MarkSeen(ctx, client, stream, "gone", now.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, now.UnixMilli(), since.UnixMilli(), "it had expired at the trim")
	after, err := retention.ReadSeen(ctx, client, []string{stream})
	require.NoError(t, err)
	assert.True(t, after[0]["gone"].ExpiredSince.IsZero())
	assert.Equal(t, now.Add(time.Second).UnixMilli(), after[0]["gone"].LastSeen.UnixMilli())
	since, err = retention.MarkSeen(ctx, client, stream, "gone", now.Add(2*time.Second))
	require.NoError(t, err)
	assert.True(t, since.IsZero(), "live: nothing to report")
}

// seed writes 10 entries to stream, group "live" delivered and acked all, "gone" none.
func seed(t *testing.T, client *redis.Client, stream string) {
	ctx := context.Background()
	for range 10 {
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"k", "v"}}).Err())
	}
	require.NoError(t, client.XGroupCreate(ctx, stream, "gone", "0-0").Err())
	require.NoError(t, client.XGroupCreate(ctx, stream, "live", "$").Err())
}

// TestMarkSeenOfADeletedStream: a lease holder marking its group live on a stream an
// operator deleted (DeleteTopic with Force) writes nothing back.
func TestMarkSeenOfADeletedStream(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const stream = "s:{t:p:0}"
	since, err := retention.MarkSeen(ctx, client, stream, "g", time.Now())
	require.NoError(t, err)
	assert.True(t, since.IsZero())
	n, err := client.Exists(ctx, keys.GroupSeen(stream)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no seen record for a stream that is gone")
}
