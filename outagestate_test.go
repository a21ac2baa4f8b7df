package streamq

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
	o := newPartOutage(OutageConfig{Backoff: time.Second, MaxBackoff: 5 * time.Second}, "orders", 3)
	now := time.Unix(1_700_000_000, 0)
	assert.Zero(t, o.snapshot().Since)

	first := o.hold(now, "down", false)
	assert.True(t, first.first)
	assert.True(t, first.probe)
	assert.Equal(t, time.Second, first.wait)
	paused, _ := o.gate.State()
	assert.True(t, paused, "the partition hands out nothing more")

	other := o.hold(now.Add(time.Millisecond), "down too", false)
	assert.False(t, other.probe, "one probe at a time")
	require.NotNil(t, other.ended)

	var waits []time.Duration
	for range 4 {
		waits = append(waits, o.hold(now, "still down", true).wait)
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, waits)
	s := o.snapshot()
	assert.Equal(t, now, s.Since)
	assert.Equal(t, 4, s.Probes)
	assert.Equal(t, "still down", s.Reason)
	assert.Equal(t, 6, o.run().inARow, "every failure of the outage in a row")

	was := o.settled(false)
	assert.Equal(t, 4, was.Probes)
	select {
	case <-other.ended:
	default:
		t.Fatal("the waiting message is released")
	}
	paused, _ = o.gate.State()
	assert.False(t, paused)
	assert.Zero(t, o.snapshot().Since)
	assert.Zero(t, o.run().inARow)

	again := o.hold(now, "down", false)
	assert.True(t, again.first && again.probe, "a new outage starts over")
	assert.Equal(t, time.Second, again.wait)
	assert.NotZero(t, o.settled(true).Since, "the message's own failure ends it too")
	assert.Equal(t, 2, o.run().inARow, "and extends the run")
}

func TestOutageConfigWait(t *testing.T) {
	t.Parallel()
	c := OutageConfig{Backoff: 300 * time.Millisecond, MaxBackoff: time.Second}
	assert.Equal(t, 300*time.Millisecond, c.wait(0))
	assert.Equal(t, 600*time.Millisecond, c.wait(1))
	assert.Equal(t, time.Second, c.wait(2))
	assert.Equal(t, time.Second, c.wait(1000), "no overflow")
}
