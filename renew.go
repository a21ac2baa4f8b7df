package streamq

import (
	"context"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/server"
)

// renewLoop renews the leases of running workers every RenewInterval. A lease found owned by
// someone else, or not renewed for a whole LeaseTTL, is lost: its worker stops at once.
func (sub *subscription) renewLoop() {
	defer sub.loops.Done()
	ctx, cancel := sub.loopCtx()
	defer cancel()
	for sub.wait(sub.cfg.RenewInterval) {
		sub.renewAll(ctx)
	}
}

// renewAll renews every running worker's lease in one pipeline. A lease found owned by
// someone else, or not renewed for a whole LeaseTTL, is lost: its worker stops at once.
func (sub *subscription) renewAll(ctx context.Context) {
	workers := sub.activeWorkers()
	held := make([]lease.Held, len(workers))
	for i, w := range workers {
		held[i] = lease.Held{Key: w.leaseKey, Token: w.token}
	}
	sent := time.Now() // a renewed lease lives at least LeaseTTL from here
	for i, r := range sub.leases.RenewAll(ctx, held) {
		w := workers[i]
		switch {
		case r.Err == nil && r.Owned:
			w.renewed(sent)
		case r.Err == nil:
			sub.loseLease(w, errors.New("lease owned by another member"))
		default:
			server.ReloadOnConnError(ctx, sub.rdb, r.Err)
			if time.Since(w.lastRenewed()) > sub.cfg.LeaseTTL {
				sub.loseLease(w, r.Err)
			}
		}
	}
}

// errLeaseExpired is why a worker stops when LeaseTTL passed since the last successful
// acquisition or renewal was sent.
var errLeaseExpired = errors.New("lease not renewed within LeaseTTL")

// leaseExpired reports whether the lease may have expired in Redis: LeaseTTL has passed
// since the request of the last successful acquisition or renewal was sent.
func (w *worker) leaseExpired() bool { return w.leaseExpiresWithin(0) }

// leaseExpiresWithin reports whether the lease may expire in Redis within d.
func (w *worker) leaseExpiresWithin(d time.Duration) bool {
	return time.Since(w.lastRenewed())+d >= w.sub.cfg.LeaseTTL
}

func (sub *subscription) loseLease(w *worker, cause error) {
	if !w.beginStop() {
		return
	}
	sub.s.stats.leasesLost.Add(1)
	sub.logger.Error("Partition lease lost, stopped delivering from it", cause, watermill.LogFields{"partition": w.p})
	go w.shutdown(false)
}

func (sub *subscription) activeWorkers() []*worker {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := make([]*worker, 0, len(sub.workers))
	for _, w := range sub.workers {
		if !w.isStopping() {
			out = append(out, w)
		}
	}
	return out
}
