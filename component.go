package streamq

import (
	"sync"
	"time"

	"github.com/streamq-dev/streamq/internal/clock"
)

// runner is the start and stop every background component shares: start runs its loop on
// a goroutine of its own, stop closes quit and waits for the loop to return. Stopping twice,
// or a runner never started, is fine.
type runner struct {
	quit     chan struct{}
	done     chan struct{}
	started  sync.Once
	stopOnce sync.Once
}

func newRunner() *runner { return &runner{quit: make(chan struct{}), done: make(chan struct{})} }

// start runs loop; loop returns when quit is closed.
func (r *runner) start(loop func()) {
	r.started.Do(func() {
		go func() {
			defer close(r.done)
			loop()
		}()
	})
}

// stop ends the loop and waits for it.
func (r *runner) stop() {
	r.stopOnce.Do(func() { close(r.quit) })
	r.started.Do(func() { close(r.done) }) // never started: nothing to wait for
	<-r.done
}

// sleep waits d on c unless quit closes first; false means quit.
func (r *runner) sleep(c clock.Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-r.quit:
		return false
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
