package admin_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestLastMemberAndProcesses: GroupStats names each member's host and PID and, once the last
// member left, that member and when it left; GroupLiveness's LastSeen is then that time, not
// a partition's once-a-minute record.
func TestLastMemberAndProcesses(t *testing.T) {
	e := newOpEnv(t)
	const topic, group = "orders", "billing"
	e.create(topic, 1)
	stop := e.member(e.client, topic, group, "worker-1")
	gs := e.waitStats(topic, group, func(gs admin.GroupStats) bool { return len(gs.Members) == 1 })
	host, _ := os.Hostname()
	require.Len(t, gs.Heartbeats, 1)
	hb := gs.Heartbeats[0]
	assert.Equal(t, host, hb.Host)
	assert.Equal(t, os.Getpid(), hb.PID)
	assert.WithinDuration(t, gs.Time, hb.Sent, 2*time.Second)
	require.NotNil(t, gs.LastMember)
	assert.Equal(t, "worker-1", gs.LastMember.Name)

	stop()
	left, err := e.adm.ServerTime(e.ctx)
	require.NoError(t, err)
	gs, err = e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	assert.Empty(t, gs.Members)
	require.NotNil(t, gs.LastMember)
	assert.True(t, gs.LastMember.Left)
	assert.Equal(t, "worker-1 ("+host+" pid "+itoa(os.Getpid())+")", gs.LastMember.String())
	assert.WithinDuration(t, left, gs.LastMember.At, time.Second)

	live, err := e.adm.GroupLiveness(e.ctx, topic)
	require.NoError(t, err)
	require.NotNil(t, live[group].LastMember)
	assert.Equal(t, gs.LastMember.At, live[group].LastSeen, "last seen when it left")
}

func itoa(n int) string { return strconv.Itoa(n) }
