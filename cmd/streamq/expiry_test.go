package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
)

// TestCLIGroupExpired: a group retention left out for its group expiry (its record written
// as a trim writes it) is shown expired by groups (an EXPIRED column, JSON expired and
// lastSeen) and by stats; a live group is not.
func TestCLIGroupExpired(t *testing.T) {
	e := newCLIEnv(t)
	stream := e.seedHeld(heldSeed{"forgot", "4", fastAckedSixSlowNothing})
	now := time.Now()
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	require.NoError(t, e.client.HSet(e.ctx, keys.GroupSeen(stream),
		keys.SeenField("slow"), ms(now.Add(-8*24*time.Hour)), keys.ExpiredField("slow"), ms(now.Add(-24*time.Hour)),
		keys.SeenField("fast"), ms(now)).Err())

	out := e.ok("groups", "forgot")
	assert.Regexp(t, `(?m)^GROUP\s+CONSUMERS\s+PENDING\s+LAG\s+TIME LAG\s+EXPIRED$`, out)
	assert.Regexp(t, `(?m)^slow\s.*\sseen \S+ ago$`, out)
	assert.Regexp(t, `(?m)^fast\s.*\s-$`, out)

	var got []groupView
	e.jsonOf(&got, "groups", "forgot")
	require.Len(t, got, 2)
	assert.Equal(t, "fast", got[0].Name)
	assert.False(t, got[0].Expired)
	assert.True(t, got[1].Expired)
	assert.Equal(t, now.Add(-8*24*time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"), got[1].LastSeen, "as every JSON time: UTC, ms")

	assert.Contains(t, e.ok("stats", "forgot", "slow"), "expired on partitions 0:")
	assert.NotContains(t, e.ok("stats", "forgot", "fast"), "expired")
}
