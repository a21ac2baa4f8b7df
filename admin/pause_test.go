package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestPauseGroup covers the operator's pause: the state and its start through GroupPause and
// GroupStats, pausing twice keeping the start, resume, a DLQ group's own pause, the errors,
// and the pause key going with DeleteGroup and DeleteTopic.
func TestPauseGroup(t *testing.T) {
	e := newOpEnv(t)
	const topic = "pausing"
	e.create(topic, 2)
	e.createGroup(topic, 0, "workers", "0")
	e.createGroup(topic, 1, "workers", "0")

	before := time.Now().Add(-time.Second)
	p, err := e.adm.PauseGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.True(t, p.Paused)
	assert.True(t, p.Since.After(before), "since %v", p.Since)
	again, err := e.adm.PauseGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.Equal(t, p.Since, again.Since, "pausing a paused group keeps its start")
	s, err := e.adm.GroupStats(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.Equal(t, p, s.Pause)
	dlq, err := e.adm.GroupPause(e.ctx, topic+":dlq", "workers")
	require.NoError(t, err)
	assert.False(t, dlq.Paused, "the group consuming the DLQ has a pause of its own")

	was, err := e.adm.ResumeGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.True(t, was)
	was, err = e.adm.ResumeGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.False(t, was)
	now, err := e.adm.GroupPause(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.Equal(t, admin.PauseState{}, now)

	_, err = e.adm.PauseGroup(e.ctx, topic, "nobody")
	assert.ErrorIs(t, err, admin.ErrGroupNotFound)
	_, err = e.adm.PauseGroup(e.ctx, "missing", "workers")
	assert.ErrorIs(t, err, admin.ErrTopicNotFound)
	_, err = e.adm.PauseGroup(e.ctx, topic, "bad group")
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)

	_, err = e.adm.PauseGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	_, err = e.adm.DeleteGroup(e.ctx, topic, "workers")
	require.NoError(t, err)
	assert.Zero(t, e.client.Exists(e.ctx, e.space.GroupPause(topic, "workers")).Val(), "DeleteGroup left the pause")

	e.createGroup(topic, 0, "others", "0")
	_, err = e.adm.PauseGroup(e.ctx, topic, "others")
	require.NoError(t, err)
	_, err = e.adm.DeleteTopic(e.ctx, topic)
	require.NoError(t, err)
	assert.Zero(t, e.client.Exists(e.ctx, e.space.GroupPause(topic, "others")).Val(), "DeleteTopic left the pause")
}

// TestGroupPauses reads the pauses of several groups at once: the paused ones only, with
// their start.
func TestGroupPauses(t *testing.T) {
	e := newOpEnv(t)
	const topic = "pauses"
	e.create(topic, 1)
	for _, g := range []string{"a", "b", "c"} {
		e.createGroup(topic, 0, g, "0")
	}
	p, err := e.adm.PauseGroup(e.ctx, topic, "b")
	require.NoError(t, err)
	got, err := e.adm.GroupPauses(e.ctx, topic, []string{"a", "b", "c"})
	require.NoError(t, err)
	assert.Equal(t, map[string]admin.PauseState{"b": p}, got)
	none, err := e.adm.GroupPauses(e.ctx, topic, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}
