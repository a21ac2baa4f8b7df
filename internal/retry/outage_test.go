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
