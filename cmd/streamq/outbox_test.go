package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/outboxstatus"
)

func (e *cliEnv) reportOutbox(name, relay string, pending, moved int64) {
	e.t.Helper()
	_, err := outboxstatus.Write(e.ctx, e.client, "", name, outboxstatus.Report{
		Relay: outboxstatus.Relay{ID: relay, Host: "db-host", PID: 99, StartedAt: time.Now()},
		Table: "orders_outbox", Group: "streamq-outbox", Dialect: "mysql", Interval: 10 * time.Second,
		Measured: true, Pending: pending, OldestAge: 1500 * time.Millisecond, MovedSinceLastReport: moved})
	require.NoError(e.t, err)
}

// TestCLIOutboxStatus: "streamq outbox status" lists what the relays reported, with and
// without NAME, as a table and as JSON; an outbox whose relays went silent says "no relay
// reporting for ...: is a relay running?"; an unknown NAME exits 3.
func TestCLIOutboxStatus(t *testing.T) {
	e := newCLIEnv(t)
	assert.Contains(t, e.ok("outbox", "status"), "no outbox reported within a week")
	var none []outboxView
	e.jsonOf(&none, "outbox", "status")
	assert.Empty(t, none)

	e.reportOutbox("orders_outbox", "relay-a", 12, 40)
	e.reportOutbox("orders_outbox", "relay-b", 12, 2)
	out := e.ok("outbox", "status")
	assert.Regexp(t, `orders_outbox\s+12\s+1\.5s\s+42\s+\d+s ago\s+2 live`, out) // a few seconds on a loaded machine
	assert.NotContains(t, out, "is a relay running?")

	out = e.ok("outbox", "status", "orders_outbox")
	assert.Contains(t, out, "rows waiting:  12")
	assert.Contains(t, out, "moved:         42")
	assert.Regexp(t, `relay-a\s+db-host\s+99\s+.*\s+40\s+yes`, out)

	var one outboxView
	raw := e.jsonOf(&one, "outbox", "status", "orders_outbox")
	requireKeys(t, raw, "name", "table", "group", "dialect", "measured", "pending", "oldestAgeMs", "measuredAt",
		"moved", "reportedAt", "sinceReportMs", "live", "relays")
	assert.Equal(t, int64(12), one.Pending)
	assert.Equal(t, int64(1500), one.OldestAgeMs)
	assert.Equal(t, int64(42), one.Moved)
	assert.True(t, one.Live)
	require.Len(t, one.Relays, 2)
	assert.Equal(t, "relay-a", one.Relays[0].ID)
	assert.Equal(t, int64(10000), one.Relays[0].IntervalMs)

	// Both relays and the outbox last reported five minutes ago.
	old := time.Now().Add(-5 * time.Minute).UnixMilli()
	for _, id := range []string{"relay-a", "relay-b"} {
		require.NoError(t, e.client.HSet(e.ctx, "streaming:mq:outbox:{orders_outbox}:relays", id,
			fmt.Sprintf(`{"host":"db-host","pid":99,"startedAt":%d,"reportedAt":%d,"intervalMs":10000,"moved":1}`, old, old)).Err())
	}
	require.NoError(t, e.client.HSet(e.ctx, "streaming:mq:outbox:{orders_outbox}", "reportedAt", old).Err())
	out = e.ok("outbox", "status")
	assert.Contains(t, out, "none live")
	assert.Regexp(t, `orders_outbox: no relay reporting for 5m\d+s: is a relay running\?`, out)
	assert.Regexp(t, `no relay reporting for 5m\d+s: is a relay running\?`, e.ok("outbox", "status", "orders_outbox"))
	var all []outboxView
	e.jsonOf(&all, "outbox", "status")
	require.Len(t, all, 1)
	assert.False(t, all[0].Live)
	assert.Contains(t, all[0].Warning, "is a relay running?")

	r := e.run("outbox", "status", "nope")
	assert.Equal(t, exitNotFound, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stderr, `no relay reported outbox "nope"`)
	assert.Equal(t, exitUsage, e.run("outbox", "status", "a", "b").code)
	assert.Equal(t, exitUsage, e.run("outbox", "status", "bad name").code)
}
