package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1d": 24 * time.Hour, "2.5d": 60 * time.Hour, "1d12h": 36 * time.Hour, "1d6h30m": 30*time.Hour + 30*time.Minute,
		"90m": 90 * time.Minute, "30s": 30 * time.Second, "0": 0, "1500ms": 1500 * time.Millisecond, " 7d ": 7 * 24 * time.Hour,
	} {
		got, err := parseDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "d", "1", "soon", "1dd", "-1d", "1d-2h", "1x"} {
		_, err := parseDuration(bad)
		assert.ErrorIs(t, err, errDuration, "%q", bad)
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "1d", 36 * time.Hour: "1d12h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s",
		2*time.Hour + 5*time.Second: "2h0m5s", 1500 * time.Millisecond: "1.5s",
	} {
		assert.Equal(t, want, durationText(d))
	}
}
