package partition_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// refused.lua runs on a Redis at maxmemory (allow-oom): the first note sets since and last,
// a later one moves last only, and each refreshes the TTL. No record reads as zero.
func TestNoteRefused(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	reg := partition.NewRegistry(client, space)

	r, err := reg.Refusal(ctx, "t")
	require.NoError(t, err)
	assert.False(t, r.Refused())

	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	require.Error(t, client.Set(ctx, "probe", "x", 0).Err(), "Redis must be full")

	since, err := reg.NoteRefused(ctx, "t")
	require.NoError(t, err, "a note is written on a full Redis")
	assert.WithinDuration(t, time.Now(), since, 2*time.Second)
	require.NoError(t, client.PExpire(ctx, space.Refused("t"), time.Second).Err())
	time.Sleep(5 * time.Millisecond)
	again, err := reg.NoteRefused(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, since, again, "the first refusal is kept")
	ttl, err := client.PTTL(ctx, space.Refused("t")).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, partition.RefusalTTL-time.Second, "the TTL is refreshed")

	r, err = reg.Refusal(ctx, "t")
	require.NoError(t, err)
	assert.True(t, r.Refused())
	assert.Equal(t, since, r.Since)
	assert.True(t, r.Last.After(r.Since), "last moves on")
}
