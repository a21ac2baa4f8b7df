package outage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/script"
)

// fill sets maxmemory (noeviction) below the used memory: Redis refuses every command that
// adds memory.
func fill(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, rdb.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	require.True(t, script.IsOOM(rdb.Set(ctx, "probe", "x", 0).Err()), "Redis must be full")
}

// writable probes key as a reader does: in a pipeline.
func writable(t *testing.T, rdb *redis.Client, key string) error {
	t.Helper()
	var probe *redis.Cmd
	_, _ = rdb.Pipelined(context.Background(), func(p redis.Pipeliner) error {
		probe = outage.QueueWritable(context.Background(), p, key)
		return nil
	})
	return outage.Writable(probe)
}

// TestWriteAtMaxmemory: on a Redis that refuses what adds memory, a record is written, then
// rewritten at the next probe and cleared, and a reader finds the writes taken.
func TestWriteAtMaxmemory(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	fill(t, rdb)
	rec := outage.Record{Member: "w1", Since: time.UnixMilli(1_700_000_000_000).UTC(), NextProbe: time.UnixMilli(1_700_000_002_000).UTC(), Probes: 1, Reason: "503"}
	require.NoError(t, outage.Write(ctx, rdb, "o", rec, time.Minute), "the first record goes through at maxmemory")
	rec.Probes, rec.Reason = 2, strings.Repeat("ledger down ", 200)
	require.NoError(t, outage.Write(ctx, rdb, "o", rec, time.Minute), "and the next probe's")
	got, err := outage.Read(ctx, rdb, []string{"o"})
	require.NoError(t, err)
	require.NotNil(t, got[0])
	assert.Equal(t, 2, got[0].Probes)
	assert.LessOrEqual(t, len(got[0].Reason), outage.MaxReason, "a long reason is cut: the write stays small")
	assert.True(t, strings.HasSuffix(got[0].Reason, "…"))
	assert.NoError(t, writable(t, rdb, "o"), "a full Redis takes the record's write")
	require.NoError(t, outage.Clear(ctx, rdb, "o"))
	got, err = outage.Read(ctx, rdb, []string{"o"})
	require.NoError(t, err)
	assert.Nil(t, got[0])
}

// TestWritableWhenRedisRefusesWrites: where Redis refuses every write (here min-replicas-to-
// write with no replica: NOREPLICAS), the record's write fails and a reader is told so
// (ErrRefused), without anything written.
func TestWritableWhenRedisRefusesWrites(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	require.NoError(t, writable(t, rdb, "o"))
	require.NoError(t, rdb.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	t.Cleanup(func() { _ = rdb.ConfigSet(context.Background(), "min-replicas-to-write", "0").Err() })
	err := outage.Write(ctx, rdb, "o", outage.Record{Member: "w1", Reason: "503"}, time.Minute)
	require.Error(t, err)
	probe := writable(t, rdb, "o")
	require.ErrorIs(t, probe, outage.ErrRefused)
	assert.Contains(t, probe.Error(), "NOREPLICAS", "Redis's reason is kept")
	n, err := rdb.Exists(ctx, "o").Result()
	require.NoError(t, err)
	assert.Zero(t, n)
}
