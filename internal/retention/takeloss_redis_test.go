package retention_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/script"
)

// A lease holder takes its group's trim losses on a full Redis too: the take only deletes a
// field. (It was a MULTI, which Redis refuses whole at maxmemory.)
func TestTakeLossesAtMaxmemory(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const loss = "streaming:mq:trimloss:{t:p:0}"
	require.NoError(t, rdb.HSet(ctx, loss, "new:g", 7, "total:g", 7).Err())
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	require.True(t, script.IsOOM(rdb.Set(ctx, "probe", "x", 0).Err()), "Redis must be full")

	n, err := retention.TakeLosses(ctx, rdb, loss, "g")
	require.NoError(t, err)
	assert.Equal(t, int64(7), n)
	n, err = retention.TakeLosses(ctx, rdb, loss, "g")
	require.NoError(t, err)
	assert.Zero(t, n, "taken once")
	total, err := rdb.HGet(ctx, loss, "total:g").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(7), total, "the cumulative count stays")
}
