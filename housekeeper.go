package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/retention"
)

// orphanGrace is how old an offloaded payload must be before the housekeeper checks whether
// its entry still exists (the entry is appended in the same script, so this only skips work).
const orphanGrace = time.Minute

// housekeeper applies retention to an owned partition every TrimInterval, starting at once:
// time retention of the partition (bounded by SafeRetention), DLQ retention by age and
// length, and removal of offloaded payloads whose entry is gone.
type housekeeper struct {
	w      *worker
	cursor int64 // where the orphan sweep goes on
	quit   chan struct{}
	done   chan struct{}
}

func newHousekeeper(w *worker) *housekeeper {
	return &housekeeper{w: w, quit: make(chan struct{}), done: make(chan struct{})}
}

func (h *housekeeper) close() {
	close(h.quit)
	<-h.done
}

func (h *housekeeper) loop() {
	defer close(h.done)
	if h.w.sub.view.dlq {
		return
	}
	for {
		h.step()
		t := time.NewTimer(h.w.sub.cfg.TrimInterval)
		select {
		case <-t.C:
		case <-h.quit:
			t.Stop()
			return
		}
	}
}

func (h *housekeeper) step() {
	w, cfg := h.w, h.w.sub.cfg
	sp, t := w.sub.view.space, w.sub.view.topic
	dlqKey := sp.DLQ(t, w.p)
	now := time.Now()
	if cfg.Retention > 0 {
		h.report(retention.TrimOlder(w.ctx, w.sub.rdb, w.stream, now.Add(-cfg.Retention), cfg.SafeRetention))("age")
	}
	if cfg.DLQRetention > 0 {
		h.report(retention.TrimOlder(w.ctx, w.sub.rdb, dlqKey, now.Add(-cfg.DLQRetention), false))("dlq-age")
	}
	if cfg.DLQRetentionMaxLen > 0 {
		h.report(retention.TrimLen(w.ctx, w.sub.rdb, dlqKey, cfg.DLQRetentionMaxLen))("dlq-length")
	}
	payloadKey := func(ref string) string { return sp.Payload(t, w.p, ref) }
	n, next, err := retention.SweepOrphans(w.ctx, w.sub.rdb, w.stream, sp.PayloadIndex(t, w.p), payloadKey, now.Add(-orphanGrace), h.cursor, 500)
	h.cursor = next
	h.report(int64(n), err)("orphaned-payloads")
}

// report logs and counts the outcome of one retention step.
func (h *housekeeper) report(n int64, err error) func(kind string) {
	return func(kind string) {
		w := h.w
		switch {
		case err != nil && w.ctx.Err() == nil:
			w.sub.logger.Error("Retention step failed", err, watermill.LogFields{"partition": w.p, "step": kind})
		case n > 0:
			w.sub.cfg.Metrics.Trimmed(w.labels(), kind, n)
			w.sub.logger.Debug("Retention", watermill.LogFields{"partition": w.p, "step": kind, "removed": n})
		}
	}
}
