package streamq

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/stream"
)

// acker batches the acks of one partition into one fenced script call, flushed when
// AckBatchSize ids wait, AckFlushInterval after the first one, and on handover.
type acker struct {
	w     *worker
	mu    sync.Mutex
	ids   []stream.Acked
	spare []stream.Acked // a flushed batch's array, reused for the next one
	kick  chan struct{}  // cap 1: the first id arrived
	full  chan struct{}  // cap 1: a batch is full
	quit  chan struct{}
	done  chan struct{}
	retry *backoff // grows while flushes fail, so a Redis outage is no hot loop
	acked string   // highest id acked so far (under mu): where a lost group is recreated
}

// highestAcked is the highest id this worker acked on its partition, "" when none.
func (a *acker) highestAcked() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked
}

func newAcker(w *worker) *acker {
	return &acker{
		w:     w,
		kick:  make(chan struct{}, 1),
		full:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
		retry: newBackoff(0, 2*time.Second),
	}
}

// add queues the ack of entry id; ref is its offloaded payload's reference ("" when none).
func (a *acker) add(id, ref string) {
	w := a.w
	e := stream.Acked{ID: id}
	// Ack sets and payload keys are only named when the script will touch them.
	if !w.sub.view.dlq && (ref != "" || w.sub.cfg.AckDeletePolicy == AckDeleteAllGroups) {
		e.AckSet = w.sub.view.space.Acks(w.sub.view.topic, w.p, id)
	}
	if !w.sub.view.dlq && ref != "" {
		e.Ref, e.PayloadKey = ref, w.sub.view.space.Payload(w.sub.view.topic, w.p, ref)
	}
	a.mu.Lock()
	a.ids = append(a.ids, e)
	n := len(a.ids)
	a.mu.Unlock()
	if n == 1 {
		signal(a.kick)
	}
	if n >= a.w.sub.cfg.AckBatchSize {
		signal(a.full)
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
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

// loop flushes batches until close.
func (a *acker) loop() {
	defer close(a.done)
	for {
		select {
		case <-a.kick:
		case <-a.quit:
			return
		}
		wait := a.retry.peek()
		if wait == 0 {
			wait = a.w.sub.cfg.AckFlushInterval
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.full:
		case <-a.quit:
			t.Stop()
			return
		}
		t.Stop()
		if a.flush(a.w.ctx) {
			a.retry.reset()
		} else {
			a.retry.next()
		}
	}
}

// close stops the loop; a final flush is up to the caller.
func (a *acker) close() {
	close(a.quit)
	<-a.done
}

// flush acks the waiting ids with the partition's lease token as fence; false when Redis
// failed and the ids wait for the next try.
func (a *acker) flush(ctx context.Context) bool {
	ids := a.take()
	if len(ids) == 0 {
		return true
	}
	w := a.w
	policy := string(w.sub.cfg.AckDeletePolicy)
	if w.sub.view.dlq {
		policy = string(AckDeleteNone)
	}
	keys := stream.AckKeys{
		Lease: w.leaseKey, Stream: w.stream, Commit: w.sub.view.commit(w.p),
		PayloadIndex: w.sub.view.space.PayloadIndex(w.sub.view.topic, w.p),
	}
	w.claimMu.Lock()
	err := stream.Ack(ctx, w.sub.rdb, keys, w.token, w.sub.cfg.ConsumerGroup, policy, w.sub.cfg.AckSetTTL, ids)
	if err == nil {
		w.forget(ids)
	}
	w.claimMu.Unlock()
	switch {
	case err == nil:
		a.mu.Lock()
		a.acked = stream.Later(a.acked, stream.Highest(ids))
		a.mu.Unlock()
		a.recycle(ids)
	case errors.Is(err, fence.ErrLeaseLost):
		if w.isStopping() { // a final flush (loseLease logs nothing more then)
			w.sub.logger.Error("Acks not applied: the lease was lost before they were flushed; the next owner delivers these entries again",
				err, watermill.LogFields{"partition": w.p, "count": len(ids)})
		}
		w.sub.loseLease(w, err)
	default:
		server.ReloadOnConnError(ctx, w.sub.rdb, err)
		a.putBack(ids)
		if ctx.Err() == nil {
			w.sub.logger.Error("Could not flush acks, will retry", err, watermill.LogFields{"partition": w.p, "count": len(ids)})
			signal(a.kick)
		}
		return false
	}
	return true
}
