package streamq

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"
)

// renewLoop renews the leases of running workers every RenewInterval. A lease found owned by
// someone else, or not renewed for a whole LeaseTTL, is lost: its worker stops at once.
func (sub *subscription) renewLoop() {
	defer sub.loops.Done()
	ctx, cancel := sub.loopCtx()
	defer cancel()
	for sub.wait(sub.cfg.RenewInterval) {
		for _, w := range sub.activeWorkers() {
			ok, err := sub.leases.Renew(ctx, w.leaseKey, w.token)
			switch {
			case err == nil && ok:
				w.renewed(time.Now())
			case err == nil:
				sub.loseLease(w, errors.New("lease owned by another member"))
			case time.Since(w.lastRenewed()) > sub.cfg.LeaseTTL:
				sub.loseLease(w, err)
			}
		}
	}
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
