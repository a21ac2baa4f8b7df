package admin_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestTrimAmortized trims a 3-partition topic of 10 entries per partition: each partition
// keeps its newest ceil(maxLen/3).
func TestTrimAmortized(t *testing.T) {
	e := newOpEnv(t)
	tests := []struct {
		maxLen      int64
		keep        int
		wantRemoved int64
	}{
		{maxLen: 10, keep: 4, wantRemoved: 18},
		{maxLen: 9, keep: 3, wantRemoved: 21},
		{maxLen: 1, keep: 1, wantRemoved: 27},
		{maxLen: 0, keep: 0, wantRemoved: 30},
		{maxLen: 100, keep: 10, wantRemoved: 0},
	}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.maxLen, 10), func(t *testing.T) {
			topic := "trim-" + strconv.FormatInt(tt.maxLen, 10)
			e.create(topic, 3)
			e.publishRoundRobin(topic, 30, 3)
			before := [][]string{e.ids(topic, 0), e.ids(topic, 1), e.ids(topic, 2)}
			removed, err := e.adm.Trim(e.ctx, topic, tt.maxLen)
			require.NoError(t, err)
			assert.Equal(t, tt.wantRemoved, removed)
			for p := range 3 {
				assert.Equal(t, before[p][10-tt.keep:], e.ids(topic, p), "partition %d keeps its newest", p)
			}
		})
	}
	_, err := e.adm.Trim(e.ctx, "trim-10", -1)
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
}

// TestTrimByAge writes 5 entries two hours old and 3 new ones to each of two partitions and
// trims entries older than an hour, two a page.
func TestTrimByAge(t *testing.T) {
	e := newOpEnv(t)
	const topic = "aged"
	e.create(topic, 2)
	old := time.Now().Add(-2 * time.Hour).UnixMilli()
	var fresh [2][]string
	for p := range 2 {
		for i := range 5 {
			e.xadd(topic, p, strconv.FormatInt(old+int64(i), 10)+"-0", "old")
		}
		for range 3 {
			fresh[p] = append(fresh[p], e.xadd(topic, p, "*", "new"))
		}
	}
	var progress []int64
	removed, err := e.adm.TrimByAge(e.ctx, topic, time.Hour, admin.TrimOptions{
		PageSize: 2,
		Progress: func(n int64) { progress = append(progress, n) },
	})
	require.NoError(t, err)
	assert.Equal(t, int64(10), removed)
	assert.Equal(t, []int64{2, 4, 5, 7, 9, 10}, progress, "after each page: 2+2+1 per partition")
	for p := range 2 {
		assert.Equal(t, fresh[p], e.ids(topic, p))
	}

	removed, err = e.adm.TrimByAge(e.ctx, topic, time.Hour, admin.TrimOptions{})
	require.NoError(t, err)
	assert.Zero(t, removed, "nothing old left")
	_, err = e.adm.TrimByAge(e.ctx, topic, -time.Second, admin.TrimOptions{})
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
}
