package consume

import (
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/run"
)

// mover appends an owned partition's due retries (of this group) and delayed messages (of
// every group) back to the partition, with one fenced script per set and step. It sleeps
// until the earliest due item, at most MoverInterval, and wakes early for retries the partition
// schedules.
type mover struct {
	d          partDeps
	store      moveStore
	cfg        Retry      // MoverInterval and MoverBatch
	partitions func() int // the topic's partition count as last read
	run        *run.Runner
	wake       chan struct{} // cap 1

	mu   sync.Mutex
	next time.Time // the earliest due time a schedule asked for
}

func newMover(d partDeps, cfg Retry, partitions func() int) *mover {
	return &mover{d: d, store: d.store, cfg: cfg, partitions: partitions, run: run.NewRunner(), wake: make(chan struct{}, 1)}
}

func (m *mover) start() { m.run.Start(m.loop) }

func (m *mover) stop() { m.run.Stop() }

// wakeAt asks the mover to look at its sets by t.
func (m *mover) wakeAt(t time.Time) {
	m.mu.Lock()
	if m.next.IsZero() || t.Before(m.next) {
		m.next = t
	}
	m.mu.Unlock()
	run.Signal(m.wake)
}

func (m *mover) loop() {
	for {
		t := m.d.clock.NewTimer(m.step())
		select {
		case <-t.C():
		case <-m.wake:
		case <-m.run.Quit():
			t.Stop()
			return
		}
		t.Stop()
	}
}

func (m *mover) sets() []retry.Set { return []retry.Set{m.store.RetrySet(), m.store.DelaySet()} }

// step moves what is due in both sets and returns how long to sleep.
func (m *mover) step() time.Duration {
	now := m.d.clock.Now()
	var dues []time.Time
	for _, set := range m.sets() {
		if due, ok := m.moveSet(set, now); ok {
			dues = append(dues, due)
		}
	}
	m.mu.Lock()
	asked := m.next
	m.next = time.Time{}
	m.mu.Unlock()
	return nextMove(now, m.d.clock.Now(), m.cfg.MoverInterval, asked, dues...)
}

// nextMove is how long the mover sleeps after a step that started at start and ended at
// end: until the earliest of the sets' next due items and a time a schedule asked for, at
// most maxWait after start, at least 1 ms. Zero times are none.
func nextMove(start, end time.Time, maxWait time.Duration, asked time.Time, dues ...time.Time) time.Duration {
	next := start.Add(maxWait)
	for _, due := range append(dues, asked) {
		if !due.IsZero() && due.Before(next) {
			next = due
		}
	}
	return max(next.Sub(end), time.Millisecond)
}

// moveSet runs one move step on set and returns when to look again (zero: at maxWait);
// false means the lease is lost or the step failed.
func (m *mover) moveSet(set retry.Set, now time.Time) (time.Time, bool) {
	res, err := m.store.Move(m.d.ctx, set, m.cfg.MoverBatch)
	switch {
	case errors.Is(err, fence.ErrLeaseLost):
		m.d.lost(err)
		return time.Time{}, false
	case err != nil:
		if m.d.ctx.Err() == nil {
			m.d.log.Error("Could not move due retries", err, watermill.LogFields{"set": set.ZSet})
		}
		return time.Time{}, false
	}
	if res.Dropped > 0 {
		m.d.log.Error("Dropped unusable retry items (no topic or no fields)", nil,
			watermill.LogFields{"set": set.ZSet, "count": res.Dropped})
	}
	m.handBack(set, res.HandedBack)
	if res.Moved >= m.cfg.MoverBatch || len(res.HandedBack) > 0 {
		return now, true // more may be due: look again at once
	}
	return res.NextDue, true
}

// handBack appends items that belong to another partition (a bad partition id reads as 0)
// there, then removes them from the set: at-least-once.
func (m *mover) handBack(set retry.Set, items []retry.Handed) {
	for _, h := range items {
		p := h.Partition
		if p >= m.partitions() {
			p = 0
		}
		if err := m.store.HandBack(m.d.ctx, set, p, h); err != nil {
			m.d.log.Error("Could not move retry item to its partition", err, watermill.LogFields{"item": h.ID, "partition": p})
		}
	}
}
