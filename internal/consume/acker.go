package consume

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/store"
	"github.com/streamq-dev/streamq/internal/stream"
)

// acker batches the acks of one partition into one fenced script call, flushed when
// BatchSize ids wait, FlushInterval after the first one, and on handover. When the group does
// not own the entries (a DLQTopic subscription), an ack only acks: no ack set, no payload, no
// delete policy.
type acker struct {
	d        partDeps
	store    ackStore
	cfg      Acks
	gate     *sync.Mutex                 // shared with the claimer: a claim and a flush never interleave
	forget   func([]stream.Acked)        // the read position releases what was acked
	frontier func([]stream.Acked) string // the frontier an ack batch may record (position.Frontier)
	run      *run.Runner
	retry    *run.Backoff // grows while flushes fail, so a Redis outage is no hot loop

	mu    sync.Mutex
	ids   []stream.Acked
	spare []stream.Acked // a flushed batch's array, reused for the next one
	acked string         // highest frontier acked so far: where a lost group is recreated
	kick  chan struct{}  // cap 1: the first id arrived
	full  chan struct{}  // cap 1: a batch is full
}

func newAcker(d partDeps, cfg Acks, gate *sync.Mutex, pos ackedPosition) *acker {
	if !d.rules.ownEntries {
		cfg.DeletePolicy = deleteNone
	}
	return &acker{
		d: d, store: d.store, cfg: cfg, gate: gate, forget: pos.Forget, frontier: pos.Frontier, run: run.NewRunner(),
		retry: run.NewBackoff(0, 2*time.Second),
		kick:  make(chan struct{}, 1), full: make(chan struct{}, 1),
	}
}

// The ack-delete policies (Acks.DeletePolicy).
const (
	deleteNone      = "none"
	deleteAllGroups = "all-groups-ack"
)

func (a *acker) start() { a.run.Start(a.loop) }

// stop ends the loop; a final flush is up to the caller.
func (a *acker) stop() { a.run.Stop() }

// ackedPosition is what the acker tells the read position: what it acked, and what frontier
// that allows.
type ackedPosition interface {
	Forget([]stream.Acked)
	Frontier([]stream.Acked) string
}

// highestAcked is the highest frontier this acker recorded on its partition (every entry it
// held below it is acked), "" when none.
func (a *acker) highestAcked() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked
}

// add queues the ack of entry id; ref is its offloaded payload's reference ("" when none).
func (a *acker) add(id, ref string) { a.queue(id, ref, false) }

// addSettled queues the bookkeeping of entry id, which a fenced settle step (retry, dead
// letter) acked already; held is what the step reported: the group held the entry then.
func (a *acker) addSettled(id, ref string, held bool) { a.queue(id, ref, held) }

func (a *acker) queue(id, ref string, held bool) {
	e := stream.Acked{ID: id, Held: held}
	// Ack sets and payload keys are only named when the script will touch them.
	if a.d.rules.ownEntries && (ref != "" || a.cfg.DeletePolicy == deleteAllGroups) {
		e.AckSet = a.d.keys.Acks(id)
	}
	if a.d.rules.ownEntries && ref != "" {
		e.Ref, e.PayloadKey = ref, a.d.keys.Payload(ref)
	}
	a.mu.Lock()
	a.ids = append(a.ids, e)
	n := len(a.ids)
	a.mu.Unlock()
	if n == 1 {
		run.Signal(a.kick)
	}
	if n >= a.cfg.BatchSize {
		run.Signal(a.full)
	}
}

func (a *acker) take() []stream.Acked {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := a.ids
	a.ids, a.spare = a.spare, nil
	return ids
}

// recycle keeps the array of a flushed batch for the next one: acks then append without
// growing a new slice from nothing every batch.
func (a *acker) recycle(ids []stream.Acked) {
	clear(ids) // no references to the flushed ids' strings
	a.mu.Lock()
	if a.spare == nil {
		a.spare = ids[:0]
	}
	a.mu.Unlock()
}

func (a *acker) putBack(ids []stream.Acked) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids = append(ids, a.ids...)
}

// loop flushes batches until stop.
func (a *acker) loop() {
	for {
		select {
		case <-a.kick:
		case <-a.run.Quit():
			return
		}
		if !a.waitBatch() {
			return
		}
		if a.flush(a.d.ctx) {
			a.retry.Reset()
		} else {
			a.retry.Next()
		}
	}
}

// waitBatch waits for the flush interval (or the retry backoff) or a full batch; false
// means stop.
func (a *acker) waitBatch() bool {
	wait := a.retry.Peek()
	if wait == 0 {
		wait = a.cfg.FlushInterval
	}
	t := a.d.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C():
	case <-a.full:
	case <-a.run.Quit():
		return false
	}
	return true
}

// flush acks the waiting ids with the partition's lease token as fence; false when Redis
// failed and the ids wait for the next try.
func (a *acker) flush(ctx context.Context) bool {
	ids := a.take()
	if len(ids) == 0 {
		return true
	}
	a.gate.Lock()
	front := a.frontier(ids)
	err := a.store.Ack(ctx, store.Ack{Policy: a.cfg.DeletePolicy, AckSetTTL: a.cfg.SetTTL, Frontier: front, Entries: ids})
	if err == nil {
		a.forget(ids)
	}
	a.gate.Unlock()
	switch {
	case err == nil:
		a.mu.Lock()
		a.acked = stream.Later(a.acked, front)
		a.mu.Unlock()
		a.recycle(ids)
	case errors.Is(err, fence.ErrLeaseLost):
		if a.d.stopping() { // a final flush (the lost lease logs nothing more then)
			a.d.log.Error("Acks not applied: the lease was lost before they were flushed; the next owner delivers these entries again",
				err, watermill.LogFields{"count": len(ids)})
		}
		a.d.lost(err)
	default:
		a.putBack(ids)
		if ctx.Err() == nil {
			a.d.log.Error("Could not flush acks, will retry", err, watermill.LogFields{"count": len(ids)})
			run.Signal(a.kick)
		}
		return false
	}
	return true
}
