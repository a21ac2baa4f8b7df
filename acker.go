package streamq

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/stream"
)

// acker batches the acks of one partition into one fenced script call, flushed when
// AckBatchSize ids wait, AckFlushInterval after the first one, and on handover.
type acker struct {
	w    *worker
	mu   sync.Mutex
	ids  []string
	kick chan struct{} // cap 1: the first id arrived
	full chan struct{} // cap 1: a batch is full
	quit chan struct{}
	done chan struct{}
}

func newAcker(w *worker) *acker {
	return &acker{
		w:    w,
		kick: make(chan struct{}, 1),
		full: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
}

func (a *acker) add(id string) {
	a.mu.Lock()
	a.ids = append(a.ids, id)
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

func (a *acker) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := a.ids
	a.ids = nil
	return ids
}

func (a *acker) putBack(ids []string) {
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
		t := time.NewTimer(a.w.sub.cfg.AckFlushInterval)
		select {
		case <-t.C:
		case <-a.full:
		case <-a.quit:
			t.Stop()
			return
		}
		t.Stop()
		a.flush(a.w.ctx)
	}
}

// close stops the loop; a final flush is up to the caller.
func (a *acker) close() {
	close(a.quit)
	<-a.done
}

// flush acks the waiting ids with the partition's lease token as fence.
func (a *acker) flush(ctx context.Context) {
	ids := a.take()
	if len(ids) == 0 {
		return
	}
	w := a.w
	err := stream.Ack(ctx, w.sub.rdb, w.leaseKey, w.stream, w.sub.leases.Token(), w.sub.cfg.ConsumerGroup, ids)
	switch {
	case err == nil:
		for _, id := range ids {
			w.forget(id)
		}
	case errors.Is(err, stream.ErrLeaseLost):
		w.sub.loseLease(w, err)
	default:
		a.putBack(ids)
		if ctx.Err() == nil {
			w.sub.logger.Error("Could not flush acks, will retry", err, watermill.LogFields{"partition": w.p, "count": len(ids)})
			signal(a.kick)
		}
	}
}
