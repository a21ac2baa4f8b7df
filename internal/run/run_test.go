package run

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/streamq-dev/streamq/internal/clock"
)

// Stop ends the loop and waits for it; twice is fine, and so is a Runner never started.
func TestRunnerStartStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := NewRunner()
	ran := make(chan struct{})
	r.Start(func() {
		close(ran)
		<-r.Quit()
	})
	r.Start(func() { t.Error("a second Start runs nothing") })
	<-ran
	r.Stop()
	r.Stop()
	NewRunner().Stop()
}

// Sleep returns true after its wait on the clock, false once Stop is called.
func TestRunnerSleep(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	r := NewRunner()
	slept := make(chan bool, 1)
	go func() { slept <- r.Sleep(fake, time.Second) }()
	require.Eventually(t, func() bool { fake.Advance(time.Second); return len(slept) == 1 }, 5*time.Second, time.Millisecond)
	assert.True(t, <-slept)
	go func() { slept <- r.Sleep(fake, time.Hour) }()
	r.Stop()
	assert.False(t, <-slept)
}

func TestBackoff(t *testing.T) {
	b := NewBackoff(0, 50*time.Millisecond)
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	assert.Equal(t, []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond}, got)
	assert.Equal(t, 50*time.Millisecond, b.Peek())
	b.Reset()
	assert.Zero(t, b.Peek())
}

// Gates: paused while one is closed, since the earliest closing; WaitOpen returns once all
// are open, or false at stop.
func TestGates(t *testing.T) {
	a, b := NewGate(), NewGate()
	gs := Gates{a, b}
	assert.False(t, gs.Paused())
	assert.True(t, gs.WaitOpen(nil))
	t1, t2 := time.Unix(100, 0), time.Unix(50, 0)
	assert.True(t, a.Set(true, t1))
	assert.False(t, a.Set(true, t1), "no change")
	assert.True(t, b.Set(true, t2))
	assert.True(t, gs.Paused())
	assert.Equal(t, t2, gs.Since())

	opened := make(chan bool, 1)
	go func() { opened <- gs.WaitOpen(nil) }()
	a.Set(false, time.Time{})
	select {
	case <-opened:
		t.Fatal("one gate is still closed")
	case <-time.After(20 * time.Millisecond):
	}
	b.Set(false, time.Time{})
	assert.True(t, <-opened)
	assert.True(t, gs.Since().IsZero())

	a.Set(true, t1)
	stop := make(chan struct{})
	close(stop)
	assert.False(t, gs.WaitOpen(stop))
}
