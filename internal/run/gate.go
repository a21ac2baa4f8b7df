package run

import (
	"sync"
	"sync/atomic"
	"time"
)

// Gate is one reason delivery may be paused: a Subscriber's own pause, an operator's pause of
// the whole group, a partition waiting out a downstream outage. Closed means paused. A
// partition's delivery loop and its fetcher wait while any of their gates is closed; nothing
// else changes: leases are renewed, the member heartbeats and keeps its partitions, and what
// is in flight finishes normally. Safe for concurrent use.
type Gate struct {
	closed  atomic.Bool // the fast path of every dispatch
	mu      sync.Mutex
	since   time.Time
	changed chan struct{} // closed and replaced on every change
}

// NewGate returns an open gate.
func NewGate() *Gate { return &Gate{changed: make(chan struct{})} }

// Set closes (paused) or opens the gate; since is when it closed. It reports whether the
// state changed.
func (g *Gate) Set(paused bool, since time.Time) bool {
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

// State reports whether the gate is closed, and since when.
func (g *Gate) State() (bool, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed.Load(), g.since
}

// current reports whether the gate is closed and the channel closed at its next change,
// read together.
func (g *Gate) current() (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed.Load(), g.changed
}

// Gates are the gates one loop waits at.
type Gates []*Gate

// Paused reports whether a gate is closed.
func (gs Gates) Paused() bool {
	for _, g := range gs {
		if g.closed.Load() {
			return true
		}
	}
	return false
}

// WaitOpen blocks while a gate is closed; false means stop closed first.
func (gs Gates) WaitOpen(stop <-chan struct{}) bool {
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

// Since is when the earliest closed gate closed; zero when every gate is open.
func (gs Gates) Since() time.Time {
	var first time.Time
	for _, g := range gs {
		if closed, at := g.State(); closed && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}
