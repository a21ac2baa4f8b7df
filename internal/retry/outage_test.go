package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPartOutage walks the state machine: the first failure starts the outage and is the
// probe, later failures wait for its end, a failed probe backs off to the cap, any settled
// delivery ends it and opens the gate.
func TestPartOutage(t *testing.T) {
	t.Parallel()
	o := NewOutage(OutageConfig{Backoff: time.Second, MaxBackoff: 5 * time.Second}, "orders", 3)
	now := time.Unix(1_700_000_000, 0)
	assert.Zero(t, o.Snapshot().Since)

	first := o.Hold(now, "down", false)
	assert.True(t, first.First)
	assert.True(t, first.Probe)
	assert.Equal(t, time.Second, first.Wait)
	paused, _ := o.Gate().State()
	assert.True(t, paused, "the partition hands out nothing more")

	other := o.Hold(now.Add(time.Millisecond), "down too", false)
	assert.False(t, other.Probe, "one probe at a time")
	require.NotNil(t, other.Ended)

	var waits []time.Duration
	for range 4 {
		waits = append(waits, o.Hold(now, "still down", true).Wait)
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, waits)
	s := o.Snapshot()
	assert.Equal(t, now, s.Since)
	assert.Equal(t, 4, s.Probes)
	assert.Equal(t, "still down", s.Reason)
	assert.Equal(t, 6, o.Run().InARow, "every failure of the outage in a row")

	was := o.Settled(false)
	assert.Equal(t, 4, was.Probes)
	select {
	case <-other.Ended:
	default:
		t.Fatal("the waiting message is released")
	}
	paused, _ = o.Gate().State()
	assert.False(t, paused)
	assert.Zero(t, o.Snapshot().Since)
	assert.Zero(t, o.Run().InARow)

	again := o.Hold(now, "down", false)
	assert.True(t, again.First && again.Probe, "a new outage starts over")
	assert.Equal(t, time.Second, again.Wait)
	assert.NotZero(t, o.Settled(true).Since, "the message's own failure ends it too")
	assert.Equal(t, 2, o.Run().InARow, "and extends the run")
}

func TestOutageConfigWait(t *testing.T) {
	t.Parallel()
	c := OutageConfig{Backoff: 300 * time.Millisecond, MaxBackoff: time.Second}
	assert.Equal(t, 300*time.Millisecond, c.wait(0))
	assert.Equal(t, 600*time.Millisecond, c.wait(1))
	assert.Equal(t, time.Second, c.wait(2))
	assert.Equal(t, time.Second, c.wait(1000), "no overflow")
}

// TestPartOutageCarried: an outage a previous owner recorded is carried over without pausing
// anything; an outage failure continues it (its start and its backoff), a settled delivery
// ends it and returns it, so the new owner reports the recovery and clears the record.
func TestPartOutageCarried(t *testing.T) {
	t.Parallel()
	cfg := OutageConfig{Backoff: time.Second, MaxBackoff: 5 * time.Second}
	since := time.Unix(1_700_000_000, 0)
	now := since.Add(time.Minute)
	rec := State{Since: since, Probes: 2, Reason: "payments: 503"}

	o := NewOutage(cfg, "orders", 3)
	o.Carry(rec)
	paused, _ := o.Gate().State()
	assert.False(t, paused, "nothing paused before a delivery tells")
	assert.Zero(t, o.Snapshot().Since, "not shown before it is confirmed")
	turn := o.Hold(now, "payments: 503 again", false)
	assert.True(t, turn.First && turn.Probe, "this owner's first failure is its probe")
	assert.Equal(t, 4*time.Second, turn.Wait, "the backoff goes on from the recorded probes")
	s := o.Snapshot()
	assert.Equal(t, since, s.Since, "the outage keeps its start")
	assert.Equal(t, "payments: 503 again", s.Reason)
	paused, _ = o.Gate().State()
	assert.True(t, paused)
	assert.Equal(t, since, o.Settled(false).Since, "an ack ends it")
	assert.Zero(t, o.Settled(false).Since, "once")

	ended := NewOutage(cfg, "orders", 3)
	ended.Carry(rec)
	was := ended.Settled(false)
	assert.Equal(t, since, was.Since, "a first delivery that succeeds ends the recorded outage")
	assert.Equal(t, "orders", was.Topic)
	assert.Equal(t, 3, was.Partition)
	assert.Zero(t, ended.Settled(false).Since, "and reports it once")
	again := ended.Hold(now, "down", false)
	assert.Equal(t, time.Second, again.Wait, "a later outage starts over")
	assert.Equal(t, now, ended.Snapshot().Since)

	none := NewOutage(cfg, "orders", 3)
	none.Carry(State{})
	assert.Zero(t, none.Settled(false).Since, "no record, nothing carried")
}
