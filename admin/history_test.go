package admin_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestHistoryRecordAndRead takes a sample of a topic with a backlog, a group that never read
// and dead letters, records it, reads it back, and checks the key goes with DeleteTopic.
func TestHistoryRecordAndRead(t *testing.T) {
	e := newOpEnv(t)
	e.create("hist", 2)
	e.publishRoundRobin("hist", 6, 2)
	e.createGroup("hist", 0, "audit", "0-0")
	e.createGroup("hist", 1, "audit", "0-0")
	_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "hist", Partition: 1, Reason: "boom", Payload: []byte("x")})
	require.NoError(t, err)

	s, err := e.adm.TakeSample(e.ctx, "hist")
	require.NoError(t, err)
	assert.Equal(t, int64(6), s.Published)
	assert.Equal(t, int64(6), s.Length)
	assert.Equal(t, int64(1), s.DLQLength)
	require.Contains(t, s.Groups, "audit")
	assert.Equal(t, int64(6), s.Groups["audit"].Lag)
	assert.Equal(t, 0, s.Groups["audit"].Members, "no member ever joined")

	opts := admin.HistoryOptions{Interval: time.Hour}
	ok, err := e.adm.RecordHistory(e.ctx, s, opts)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = e.adm.RecordHistory(e.ctx, s, opts)
	require.NoError(t, err)
	assert.False(t, ok, "within the interval of the newest sample")

	got, err := e.adm.History(e.ctx, "hist", time.Hour)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, s.Time.UnixMilli(), got[0].Time.UnixMilli())
	assert.Equal(t, s.Groups, got[0].Groups)
	assert.Equal(t, s.DLQLength, got[0].DLQLength)

	require.True(t, dtExists(t, e.client, e.space.History("hist")))
	_, err = e.adm.DeleteTopic(e.ctx, "hist")
	require.NoError(t, err)
	assert.False(t, dtExists(t, e.client, e.space.History("hist")), "DeleteTopic removes the history")
	_, err = e.adm.History(e.ctx, "hist", time.Hour)
	assert.True(t, errors.Is(err, admin.ErrTopicNotFound))
}
