package stream_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
)

// TestLags proves the wiring of the lag algorithm against a real Redis: a lag Redis reports
// is used, one it reports unknown (after XGROUP SETID, or entries deleted) is counted with
// XLEN at 0-0 or a bounded XRANGE after the last delivered id.
func TestLags(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	tests := []struct {
		name string
		seed func(t *testing.T, key string) // on a stream of 3 entries with group g at 0-0
		want stream.Lag
	}{
		{name: "new group, nothing read", seed: func(*testing.T, string) {}, want: stream.Lag{N: 3, Exact: true}},
		{name: "counted with XLEN at 0-0", seed: func(t *testing.T, key string) {
			require.NoError(t, client.XDel(ctx, key, "2-0").Err())
			require.NoError(t, client.XGroupSetID(ctx, key, "g", "0-0").Err())
		}, want: stream.Lag{N: 2, Exact: true}},
		{name: "counted with XRANGE after the last delivered id", seed: func(t *testing.T, key string) {
			require.NoError(t, client.XGroupSetID(ctx, key, "g", "1-0").Err())
		}, want: stream.Lag{N: 2, Exact: true}},
		{name: "caught up", seed: func(t *testing.T, key string) {
			require.NoError(t, client.XGroupSetID(ctx, key, "g", "$").Err())
		}, want: stream.Lag{Exact: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "lag:" + tt.name
			for _, id := range []string{"1-0", "2-0", "3-0"} {
				require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: id, Values: []any{"k", "v"}}).Err())
			}
			require.NoError(t, stream.CreateGroups(ctx, client, []string{key}, "g", "0-0"))
			tt.seed(t, key)
			keys := []string{key, "lag:never-written"}
			groups, err := stream.Groups(ctx, client, keys)
			require.NoError(t, err)
			require.Len(t, groups[0], 1)
			require.Empty(t, groups[1])
			lags, err := stream.Lags(ctx, client, keys, groups, nil)
			require.NoError(t, err)
			require.Equal(t, [][]stream.Lag{{tt.want}, {}}, lags)
		})
	}
}
