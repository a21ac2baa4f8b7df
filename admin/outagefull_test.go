package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/fulltest"
)

// TestGroupStatsOutageAtMaxmemory: Redis fills during a downstream outage; the lease holder's
// record still goes through at each failed probe (its probe count moves on after the fill),
// so GroupStats shows the outage, not a running partition, and its state is known.
func TestGroupStatsOutageAtMaxmemory(t *testing.T) {
	e := newOpEnv(t)
	const topic, group = "invoices", "ledger"
	e.create(topic, 1)
	e.publishRoundRobin(topic, 3, 1)
	fulltest.Outage(t, e.client, topic, group, "ledger: 503 Service Unavailable")
	gs := e.waitStats(topic, group, func(gs admin.GroupStats) bool { return gs.Outages == 1 })
	fulltest.Fill(t, e.client)
	before := gs.Partitions[0].Outage.Probes
	gs = e.waitStats(topic, group, func(gs admin.GroupStats) bool {
		return gs.Outages == 1 && gs.Partitions[0].Outage.Probes >= before+2
	})
	p := gs.Partitions[0]
	assert.Equal(t, "ledger: 503 Service Unavailable", p.Outage.Reason)
	assert.NoError(t, p.OutageUnknown, "at maxmemory the record is written: the state is known")
	assert.Zero(t, gs.OutagesUnknown)
}

// TestGroupStatsOutageUnknownWhenRedisRefusesWrites: where Redis refuses every write (here
// min-replicas-to-write with no replica), a partition with no outage record may be waiting out
// an outage nobody could record: GroupStats says its outage state is unknown, and why.
func TestGroupStatsOutageUnknownWhenRedisRefusesWrites(t *testing.T) {
	e := newOpEnv(t)
	const topic, group = "invoices", "reports"
	e.create(topic, 2)
	e.publishRoundRobin(topic, 4, 2)
	for p := range 2 {
		e.createGroup(topic, p, group, "0-0")
	}
	gs, err := e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	require.Zero(t, gs.OutagesUnknown)

	require.NoError(t, e.client.ConfigSet(e.ctx, "min-replicas-to-write", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "min-replicas-to-write", "0").Err() })
	gs, err = e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(t, err)
	assert.Equal(t, 2, gs.OutagesUnknown)
	for _, p := range gs.Partitions {
		require.ErrorIs(t, p.OutageUnknown, admin.ErrWritesRefused, "partition %d", p.Partition)
		assert.Contains(t, p.OutageUnknown.Error(), "NOREPLICAS")
		assert.Nil(t, p.Outage)
	}
	lag, err := e.adm.TopicLag(e.ctx, topic)
	require.NoError(t, err)
	out, err := e.adm.Outages(e.ctx, lag)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, out[group].Unknown, "the dashboard's read says the same")
	assert.ErrorIs(t, out[group].Refused, admin.ErrWritesRefused)
}

// waitStats waits for GroupStats of group to satisfy ok and returns it.
func (e *opEnv) waitStats(topic, group string, ok func(admin.GroupStats) bool) admin.GroupStats {
	e.t.Helper()
	var gs admin.GroupStats
	require.Eventually(e.t, func() bool {
		var err error
		gs, err = e.adm.GroupStats(e.ctx, topic, group)
		return err == nil && ok(gs)
	}, 30*time.Second, 50*time.Millisecond)
	return gs
}
