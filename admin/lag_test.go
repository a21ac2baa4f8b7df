package admin_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// backlog appends count entries to partition p whose ids are ago in the past, a millisecond
// apart, and returns their ids.
func (e *opEnv) backlog(topic string, p, count int, ago time.Duration) []string {
	e.t.Helper()
	start := time.Now().Add(-ago).UnixMilli()
	out := make([]string, count)
	for i := range out {
		out[i] = e.xadd(topic, p, strconv.FormatInt(start+int64(i), 10)+"-1", "b"+strconv.Itoa(p)+"-"+strconv.Itoa(i))
	}
	return out
}

// TestTimeLagIsTheAgeOfTheOldestUndeliveredEntry: a group reset to the beginning of a backlog
// published 3 minutes earlier is 3 minutes behind (the age of its first undelivered entry on
// the server's clock, not the span between two ids, which is 0.3 s here), with the whole
// backlog as its lag; the entries it reads become pending, 3 minutes old.
func TestTimeLagIsTheAgeOfTheOldestUndeliveredEntry(t *testing.T) {
	e := newOpEnv(t)
	e.create("aged", 2)
	ids := e.backlog("aged", 0, 300, 3*time.Minute)
	e.backlog("aged", 1, 100, 3*time.Minute)
	for p := range 2 {
		e.createGroup("aged", p, "late", "$")
	}
	caughtUp, err := e.adm.GroupLag(e.ctx, "aged", "late")
	require.NoError(t, err)
	assert.Zero(t, caughtUp.Lag)
	assert.Zero(t, caughtUp.TimeLag, "a caught-up group has no time lag")

	_, err = e.adm.ResetGroupOffset(e.ctx, "aged", "late", admin.OffsetBeginning())
	require.NoError(t, err)
	e.readGroup("aged", 0, "late", "c", 10)

	gl, err := e.adm.GroupLag(e.ctx, "aged", "late")
	require.NoError(t, err)
	assert.Equal(t, int64(290+100), gl.Lag)
	assert.True(t, gl.Exact)
	assert.InDelta(t, (3 * time.Minute).Seconds(), gl.TimeLag.Seconds(), 10, "time lag %s", gl.TimeLag)
	assert.WithinDuration(t, time.Now(), gl.Time, 10*time.Second, "the server's clock")
	require.Len(t, gl.Partitions, 2)
	p0 := gl.Partitions[0]
	assert.Equal(t, ids[10], p0.OldestID)
	assert.Equal(t, int64(10), p0.Pending)
	assert.Equal(t, ids[0], p0.OldestPendingID)
	assert.InDelta(t, (3 * time.Minute).Seconds(), p0.PendingAge.Seconds(), 10)
	assert.Equal(t, int64(1), p0.PendingDeliveries)
	assert.Equal(t, int64(100), gl.Partitions[1].Lag)
	assert.Zero(t, gl.Partitions[1].Pending)
	assert.Zero(t, gl.Partitions[1].PendingAge)

	_, err = e.adm.GroupLag(e.ctx, "aged", "nobody")
	require.ErrorIs(t, err, admin.ErrGroupNotFound)
}
