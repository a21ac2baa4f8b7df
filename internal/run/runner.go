// Package run holds what every background loop of the engine shares: the start and stop of a
// loop (Runner), a sleep on the clock that ends at stop, the doubling wait after failures
// (Backoff), and the gates a paused loop waits at (Gate).
package run

import (
	"sync"
	"time"

	"github.com/streamq-dev/streamq/internal/clock"
)

// Runner is the start and stop every background component shares: Start runs its loop on a
// goroutine of its own, Stop closes Quit and waits for the loop to return. Stopping twice, or
// a Runner never started, is fine.
type Runner struct {
	quit     chan struct{}
	done     chan struct{}
	started  sync.Once
	stopOnce sync.Once
}

// NewRunner returns a Runner not started yet.
func NewRunner() *Runner { return &Runner{quit: make(chan struct{}), done: make(chan struct{})} }

// Start runs loop once; loop returns when Quit is closed.
func (r *Runner) Start(loop func()) {
	r.started.Do(func() {
		go func() {
			defer close(r.done)
			loop()
		}()
	})
}

// Stop ends the loop and waits for it.
func (r *Runner) Stop() {
	r.stopOnce.Do(func() { close(r.quit) })
	r.started.Do(func() { close(r.done) }) // never started: nothing to wait for
	<-r.done
}

// Quit is closed when Stop is called.
func (r *Runner) Quit() <-chan struct{} { return r.quit }

// Sleep waits d on c unless Stop is called first; false means stop.
func (r *Runner) Sleep(c clock.Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-r.quit:
		return false
	}
}

// Signal wakes whoever waits on ch (a channel of capacity 1) without blocking: a wake-up
// already pending is enough.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
