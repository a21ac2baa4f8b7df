// Package clock is the time source of streamq's timing rules (lease expiry, renewals, retry
// and delay due times, movers, housekeepers, backoffs), so they can be tested with a Fake
// that moves only when told to.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a time.Timer behind an interface: C fires once, d after it was made or reset.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the wall clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Since is the time elapsed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Fake is a clock that moves only on Advance; its timers fire when it passes their time.
// The zero value is not usable: use NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a Fake at now.
func NewFake(now time.Time) *Fake { return &Fake{now: now} }

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer implements Clock.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Advance moves the clock by d and fires every timer due by then.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	var due []*fakeTimer
	keep := f.timers[:0]
	for _, t := range f.timers {
		if t.active && !t.when.After(now) {
			t.active = false
			due = append(due, t)
			continue
		}
		if t.active {
			keep = append(keep, t)
		}
	}
	f.timers = keep
	f.mu.Unlock()
	for _, t := range due {
		select {
		case t.c <- now:
		default:
		}
	}
}

// Timers is the number of timers waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

type fakeTimer struct {
	f      *Fake
	c      chan time.Time
	when   time.Time
	active bool // under f.mu
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.active
	t.active = false
	t.f.removeLocked(t)
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	was := t.active
	t.when, t.active = t.f.now.Add(d), true
	if !was {
		t.f.timers = append(t.f.timers, t)
	}
	fire := d <= 0
	if fire {
		t.active = false
		t.f.removeLocked(t)
	}
	t.f.mu.Unlock()
	if fire {
		select {
		case t.c <- t.f.Now():
		default:
		}
	}
	return was
}

func (f *Fake) removeLocked(t *fakeTimer) {
	for i, x := range f.timers {
		if x == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			return
		}
	}
}
