package streamq

import (
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/stream"
)

// mover appends an owned partition's due retries (of this group) and delayed messages (of
// every group) back to the partition, with one fenced script per set and step. It sleeps
// until the earliest due item, at most RetryMoverInterval, and wakes early for retries its
// worker schedules.
type mover struct {
	w    *worker
	wake chan struct{} // cap 1
	mu   sync.Mutex
	next time.Time
	quit chan struct{}
	done chan struct{}
}

func newMover(w *worker) *mover {
	return &mover{w: w, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// wakeAt asks the mover to look at its sets by t.
func (m *mover) wakeAt(t time.Time) {
	m.mu.Lock()
	if m.next.IsZero() || t.Before(m.next) {
		m.next = t
	}
	m.mu.Unlock()
	signal(m.wake)
}

func (m *mover) close() {
	close(m.quit)
	<-m.done
}

func (m *mover) loop() {
	defer close(m.done)
	if m.w.sub.view.dlq {
		return
	}
	for {
		t := time.NewTimer(m.step())
		select {
		case <-t.C:
		case <-m.wake:
		case <-m.quit:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// step moves what is due in both sets and returns how long to sleep.
func (m *mover) step() time.Duration {
	maxWait := m.w.sub.cfg.RetryMoverInterval
	next := time.Now().Add(maxWait)
	for _, set := range []retry.Set{m.w.retrySet(), m.w.delaySet()} {
		due, ok := m.moveSet(set)
		if ok && !due.IsZero() && due.Before(next) {
			next = due
		}
	}
	m.mu.Lock()
	if !m.next.IsZero() && m.next.Before(next) {
		next = m.next
	}
	m.next = time.Time{}
	m.mu.Unlock()
	return max(time.Until(next), time.Millisecond)
}

// moveSet runs one move step on set; false means the lease is lost or the step failed.
func (m *mover) moveSet(set retry.Set) (time.Time, bool) {
	w := m.w
	res, err := retry.Move(w.ctx, w.sub.rdb, w.fence(), set, w.sub.cfg.RetryMoverBatch)
	switch {
	case errors.Is(err, fence.ErrLeaseLost):
		w.sub.loseLease(w, err)
		return time.Time{}, false
	case err != nil:
		server.ReloadOnConnError(w.ctx, w.sub.rdb, err)
		if w.ctx.Err() == nil {
			w.sub.logger.Error("Could not move due retries", err, watermill.LogFields{"partition": w.p, "set": set.ZSet})
		}
		return time.Time{}, false
	}
	if res.Dropped > 0 {
		w.sub.logger.Error("Dropped unusable retry items (no topic or no fields)", nil,
			watermill.LogFields{"partition": w.p, "set": set.ZSet, "count": res.Dropped})
	}
	m.handBack(set, res.HandedBack)
	if res.Moved >= w.sub.cfg.RetryMoverBatch || len(res.HandedBack) > 0 {
		return time.Now(), true
	}
	return res.NextDue, true
}

// handBack appends items that belong to another partition (a bad partitionId reads as 0, as
// the seed says) with a plain XADD, then removes them from the set: at-least-once.
func (m *mover) handBack(set retry.Set, items []retry.Handed) {
	w := m.w
	for _, h := range items {
		p := h.Partition
		if p >= w.sub.partitions() {
			p = 0
		}
		to := w.sub.view.space.PartitionStream(w.sub.view.topic, p)
		if err := stream.Append(w.ctx, w.sub.rdb, to, h.Values); err != nil {
			w.sub.logger.Error("Could not move retry item to its partition", err, watermill.LogFields{"item": h.ID})
			continue
		}
		if err := retry.Forget(w.ctx, w.sub.rdb, set, h.ID); err != nil {
			w.sub.logger.Error("Could not remove moved retry item", err, watermill.LogFields{"item": h.ID})
		}
	}
}

func (sub *subscription) partitions() int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return max(sub.parts, 1)
}
