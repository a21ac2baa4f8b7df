package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/admin"
)

// timeTextForm is the one form of a time in a text, the CLI's with --utc.
const timeTextForm = `\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC`

// TestTextsShowTimesInUTC: an outage's String and an AlreadyReplayedError's text show their
// time as the CLI and the dashboard do, in UTC to the second with the zone, whatever the
// time's own zone.
func TestTextsShowTimesInUTC(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	since := time.Date(2026, 12, 3, 13, 0, 0, 250e6, cet) // 12:00:00.25 UTC
	o := admin.Outage{Since: since, NextProbe: since.Add(2*time.Minute + 8*time.Second), Probes: 5, Reason: "payments: 503"}
	assert.Equal(t, "downstream failing since 2026-12-03 12:00:00 UTC (2m0s), next probe in 8s, 5 probes failed: payments: 503",
		o.At(since.Add(2*time.Minute)))
	assert.Regexp(t, `^downstream failing since `+timeTextForm+` \(`, o.String())

	err := &admin.AlreadyReplayedError{Topic: "orders", Partition: 3, ID: "1718000000000-0", ReplayedAt: since, ReplayedAs: "1718000004242-0"}
	assert.Equal(t, `dead letter already replayed: 1718000000000-0 of "orders" partition 3 at 2026-12-03 12:00:00 UTC as 1718000004242-0`, err.Error())
	assert.Regexp(t, ` at `+timeTextForm+` as `, err.Error())
}
