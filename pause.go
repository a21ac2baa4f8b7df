package streamq

import (
	"sync"
	"sync/atomic"
	"time"
)

// gate is one reason delivery may be paused: the Subscriber's own (Pause, Resume) or an
// operator's for the whole group (admin.PauseGroup). Closed means paused. A partition's
// delivery loop and its fetcher wait while any of their gates is closed; nothing else
// changes: leases are renewed, the member heartbeats and keeps its partitions, and what is in
// flight finishes normally.
type gate struct {
	closed  atomic.Bool // the fast path of every dispatch
	mu      sync.Mutex
	since   time.Time
	changed chan struct{} // closed and replaced on every change
}

func newGate() *gate { return &gate{changed: make(chan struct{})} }

// set closes (paused) or opens the gate; since is when it closed. It reports whether the
// state changed.
func (g *gate) set(paused bool, since time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed.Load() == paused {
		return false
	}
	g.closed.Store(paused)
	g.since = since
	close(g.changed)
	g.changed = make(chan struct{})
	return true
}

// state reports whether the gate is closed, and since when.
func (g *gate) state() (bool, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed.Load(), g.since
}

// current reports whether the gate is closed and the channel closed at its next change,
// read together.
func (g *gate) current() (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed.Load(), g.changed
}

// gates are every gate of one subscription.
type gates []*gate

func (gs gates) paused() bool {
	for _, g := range gs {
		if g.closed.Load() {
			return true
		}
	}
	return false
}

// waitOpen blocks while a gate is closed; false means stop closed first.
func (gs gates) waitOpen(stop <-chan struct{}) bool {
	for {
		var wait <-chan struct{}
		for _, g := range gs {
			if closed, ch := g.current(); closed {
				wait = ch
				break
			}
		}
		if wait == nil {
			return true
		}
		select {
		case <-wait:
		case <-stop:
			return false
		}
	}
}

// since is when the earliest closed gate closed; zero when every gate is open.
func (gs gates) since() time.Time {
	var first time.Time
	for _, g := range gs {
		if closed, at := g.state(); closed && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// reportPause tells the metrics (a PauseReporter) whether the subscription's delivery is
// paused, and since when.
func (sub *subscription) reportPause() {
	if r, ok := sub.cfg.Metrics.(PauseReporter); ok {
		r.Paused(sub.labels(), sub.gates.since())
	}
}
