package stream_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
)

// consumerNames lists the Redis consumers of group on stream.
func consumerNames(t *testing.T, client redis.UniversalClient, str, group string) []string {
	t.Helper()
	cs, err := client.XInfoConsumers(context.Background(), str, group).Result()
	require.NoError(t, err)
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	sort.Strings(names)
	return names
}

// TestPruneKeepsConsumersWithPendingEntries: the prune step removes idle consumers of no live
// member only when they hold no pending entry, and never a live member's.
func TestPruneKeepsConsumersWithPendingEntries(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	const str = "stream:topic:{prune:p:0}"
	require.NoError(t, client.XGroupCreateMkStream(ctx, str, "g", "0").Err())
	for i := 0; i < 3; i++ {
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: str, Values: []any{"f", "v"}}).Err())
	}
	read := func(consumer string, n int64) {
		require.NoError(t, client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: consumer, Streams: []string{str, ">"}, Count: n}).Err())
	}
	read("holds-one", 1) // pending: 1
	require.NoError(t, client.XGroupCreateConsumer(ctx, str, "g", "idle-empty").Err())
	require.NoError(t, client.XGroupCreateConsumer(ctx, str, "g", "live-empty").Err())
	read("live-holds", 1)

	removed, err := stream.PruneConsumers(ctx, client, str, "g", 0, []string{"live-empty", "live-holds"})
	require.NoError(t, err)
	assert.Equal(t, []string{"idle-empty"}, removed)
	assert.Equal(t, []string{"holds-one", "live-empty", "live-holds"}, consumerNames(t, client, str, "g"))
	pending, err := client.XPending(ctx, str, "g").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), pending.Count, "no pending entry was dropped")

	removed, err = stream.PruneConsumers(ctx, client, str, "g", time.Hour, nil)
	require.NoError(t, err)
	assert.Empty(t, removed, "a consumer idle for less than minIdle stays")
	removed, err = stream.PruneConsumers(ctx, client, "stream:topic:{nothing:p:0}", "g", 0, nil)
	require.NoError(t, err, "a missing stream or group is nothing to prune")
	assert.Empty(t, removed)
}
