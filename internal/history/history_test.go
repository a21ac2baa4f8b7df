package history_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/history"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

func sample(added int64) history.Sample {
	return history.Sample{
		Time: time.UnixMilli(1_700_000_000_000 + added), EntriesAdded: added, Length: added / 2, DLQLength: 3,
		Groups: map[string]history.Group{"billing": {EntriesRead: added - 1, Lag: 1, Pending: 2, TimeLag: 1500 * time.Millisecond, Members: 1}},
	}
}

// TestRecordAndRead records samples and reads them back as written, oldest first.
func TestRecordAndRead(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	key := keys.New("", "").History("orders")
	for _, n := range []int64{10, 20, 30} {
		ok, err := history.Record(ctx, rdb, key, sample(n), history.Bounds{Retain: time.Hour})
		require.NoError(t, err)
		assert.True(t, ok)
	}
	got, err := history.Read(ctx, rdb, key, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []history.Sample{sample(10), sample(20), sample(30)}, normalise(got))
	later, err := history.Read(ctx, rdb, key, sample(15).Time)
	require.NoError(t, err)
	assert.Len(t, later, 2, "only the samples after since")
	ttl, err := rdb.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.InDelta(t, 2*time.Hour, ttl, float64(time.Minute), "the key expires twice the retention after the last sample")
}

// TestRecordSkipsWithinGap: a second writer within the minimum gap of the newest sample adds
// nothing, so two dashboards sampling the same topic share one history.
func TestRecordSkipsWithinGap(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	key := keys.New("", "").History("orders")
	b := history.Bounds{MinGap: time.Hour, Retain: time.Hour}
	ok, err := history.Record(ctx, rdb, key, sample(1), b)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = history.Record(ctx, rdb, key, sample(2), b)
	require.NoError(t, err)
	assert.False(t, ok, "a sample younger than the gap exists")
	n, err := rdb.XLen(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

// TestRecordTrimsOld: samples older than the retention are gone after the next record.
func TestRecordTrimsOld(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	key := keys.New("", "").History("orders")
	b := history.Bounds{Retain: 300 * time.Millisecond}
	_, err := history.Record(ctx, rdb, key, sample(1), b)
	require.NoError(t, err)
	first, err := rdb.XRange(ctx, key, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, first, 1)
	require.Eventually(t, func() bool {
		_, err := history.Record(ctx, rdb, key, sample(2), b)
		require.NoError(t, err)
		left, err := rdb.XRange(ctx, key, first[0].ID, first[0].ID).Result()
		require.NoError(t, err)
		return len(left) == 0
	}, 10*time.Second, 50*time.Millisecond, "the old sample was never trimmed")
}

// TestReadSkipsMalformed: an entry that is no sample is left out, the others read.
func TestReadSkipsMalformed(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	key := keys.New("", "").History("orders")
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"t", "not a number"}}).Err())
	_, err := history.Record(ctx, rdb, key, sample(5), history.Bounds{Retain: time.Hour})
	require.NoError(t, err)
	got, err := history.Read(ctx, rdb, key, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []history.Sample{sample(5)}, normalise(got))
}

func normalise(s []history.Sample) []history.Sample {
	for i := range s {
		s[i].Time = time.UnixMilli(s[i].Time.UnixMilli())
	}
	return s
}
