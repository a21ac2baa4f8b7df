package stream_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/stream"
)

// TestCountBetween counts ranges of a stream of 2500 entries (ids 1-0 .. 2500-0), across
// the script's chunks, and stops at the bound.
func TestCountBetween(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	for i := 1; i <= 2500; i++ {
		require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: strconv.Itoa(i) + "-0", Values: []string{"f", "v"}}).Err())
	}
	tests := []struct {
		start, end string
		bound      int64
		n          int64
		exact      bool
	}{
		{"-", "+", 10000, 2500, true},
		{"(1000-0", "2000-0", 10000, 1000, true},
		{"(2000-0", "1000-0", 10000, 0, true},
		{"-", "+", 2500, 2500, true},
		{"-", "+", 1500, 1500, false},
		{"(0-0", "+", 1, 1, false},
	}
	for _, tt := range tests {
		n, exact, err := stream.CountBetween(ctx, rdb, "s", tt.start, tt.end, tt.bound)
		require.NoError(t, err)
		assert.Equal(t, [2]any{tt.n, tt.exact}, [2]any{n, exact}, "%s..%s bound %d", tt.start, tt.end, tt.bound)
	}
	n, exact, err := stream.CountBetween(ctx, rdb, "missing", "-", "+", 10)
	require.NoError(t, err)
	assert.Equal(t, [2]any{int64(0), true}, [2]any{n, exact})
	_, _, err = stream.CountBetween(ctx, rdb, "s", "nope", "+", 10)
	require.ErrorIs(t, err, stream.ErrInvalidID)
}
