package dashboard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestOutageHealth: partitions waiting out a downstream outage are one warning that says
// which, since when, the next probe and the reason, with the next step; it replaces "nothing
// consumed", which the outage explains.
func TestOutageHealth(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	stalled := make([]admin.HistoryGroup, minTrend)
	for i := range stalled {
		stalled[i] = admin.HistoryGroup{Lag: 500, EntriesRead: 10}
	}
	f := groupFacts{Topic: "orders", Name: "payments", Now: now, Members: 2, Lag: 500, trend: stalled, span: time.Minute,
		Outages: []admin.Outage{
			{Partition: 1, Since: now.Add(-90 * time.Second), NextProbe: now.Add(8 * time.Second), Reason: "payments: 503"},
			{Partition: 0, Since: now.Add(-2 * time.Minute), NextProbe: now.Add(4 * time.Second), Reason: "payments: 503 first"},
		}}
	v := groupHealth(f)
	require.Len(t, v.Problems, 1)
	p := v.Problems[0]
	assert.Equal(t, probOutage, p.Code)
	assert.Equal(t, sevWarning, v.State)
	assert.Equal(t, "paused: downstream failing on partitions 1, 0, next probe in 4s (payments: 503 first); since 2026-12-03 11:58:00 UTC (2m ago)", p.Text)
	assert.Equal(t, jsonTime(now.Add(-2*time.Minute)), p.Since)
	assert.Contains(t, p.Next, "resumes by itself")
	assert.Equal(t, "streamq stats orders payments", p.Command)

	f.Outages = nil
	assert.Equal(t, probNotConsuming, groupHealth(f).Problems[0].Code, "without the outage: nothing consumed")
}

// TestPausedHealth: a group an operator paused is one "paused" warning, since the pause, with
// the command that resumes it, in place of "nothing consumed" and of its growing lag (the
// pause explains both).
func TestPausedHealth(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f := groupFacts{Topic: "orders", Name: "payments", Now: now, Members: 2, Lag: 500, Paused: true, PausedSince: now.Add(-5 * time.Minute)}
	f.trend = []admin.HistoryGroup{{Lag: 100, EntriesRead: 10}, {Lag: 300, EntriesRead: 10}, {Lag: 500, EntriesRead: 10}}
	f.span = time.Minute
	v := groupHealth(f)
	require.Len(t, v.Problems, 1)
	p := v.Problems[0]
	assert.Equal(t, probPaused, p.Code)
	assert.Equal(t, sevWarning, v.State)
	assert.Equal(t, "paused by an operator: 500 messages wait; since 2026-12-03 11:55:00 UTC (5m ago)", p.Text)
	assert.Equal(t, "streamq resume orders payments", p.Command)

	f.Members = 0
	both := groupHealth(f)
	require.Len(t, both.Problems, 2, "no member, and paused")
	assert.Equal(t, []string{probNoMember, probPaused}, []string{both.Problems[0].Code, both.Problems[1].Code})

	f.Members, f.Paused = 2, false
	codes := []string{}
	for _, p := range groupHealth(f).Problems {
		codes = append(codes, p.Code)
	}
	assert.Equal(t, []string{probNotConsuming, probLagGrowing}, codes, "resumed and still stuck")
}
