package outage

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/script"
)

// TestRecordRoundTrip writes, reads (a missing key and a stored value that is no record read
// as none) and clears records.
func TestRecordRoundTrip(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	script.Compat(rdb)
	ctx := context.Background()
	rec := Record{Member: "w1", Since: time.UnixMilli(1_700_000_000_000).UTC(), NextProbe: time.UnixMilli(1_700_000_004_000).UTC(), Probes: 2, Reason: "503"}
	require.NoError(t, Write(ctx, rdb, "a", rec, time.Minute))
	require.NoError(t, rdb.Set(ctx, "junk", "{not json", 0).Err())
	got, err := Read(ctx, rdb, []string{"a", "missing", "junk"})
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.NotNil(t, got[0])
	assert.Equal(t, rec, *got[0])
	assert.Nil(t, got[1])
	assert.Nil(t, got[2])
	assert.Greater(t, mr.TTL("a"), time.Duration(0), "the record expires")
	require.NoError(t, Clear(ctx, rdb, "a"))
	assert.False(t, mr.Exists("a"))
}

// TestCut: a long reason or member is cut at a rune boundary and ends in "…"; a short one
// is kept.
func TestCut(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "503", 10, "503"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdefghij", 7, "abcd…"},
		{"cut inside a rune", "ééééé", 6, "é…"},
	}
	for _, tt := range tests {
		got := cut(tt.in, tt.n)
		assert.Equal(t, tt.want, got, tt.name)
		assert.True(t, utf8.ValidString(got) && len(got) <= max(tt.n, len(tt.in)) && len(got) <= tt.n, tt.name)
	}
	long := strings.Repeat("x", 10*MaxReason)
	assert.Len(t, cut(long, MaxReason), MaxReason)
}

// FuzzDecode: whatever a key holds, Decode returns a record or nil, never panics.
func FuzzDecode(f *testing.F) {
	f.Add(`{"member":"w1","since":"2026-12-03T12:00:00Z","next_probe":"2026-12-03T12:00:04Z","probes":2,"reason":"503"}`)
	f.Add(`{"probes":"two"}`)
	f.Add(``)
	f.Fuzz(func(_ *testing.T, v string) {
		_ = Decode(redis.NewStringResult(v, nil))
	})
}
