package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
)

// orphanGrace is how old an offloaded payload must be before the housekeeper checks whether
// its entry still exists (the entry is appended in the same script, so this only skips work).
const orphanGrace = time.Minute

// housekeeper applies retention to an owned partition every TrimInterval, starting at once:
// the length retention the topic's publishers recorded and the Subscriber's time retention
// (both stop at what a group still needs unless hard), the report of this group's entries a
// hard cap removed, DLQ retention by age and length, and removal of offloaded payloads whose
// entry is gone.
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
	now := time.Now()
	loss := sp.TrimLoss(t, w.p)
	if length := w.sub.lengthRetention(); length.maxLen > 0 {
		h.trim(loss, "length", length.rule())
	}
	if cfg.Retention > 0 {
		h.trim(loss, "age", retention.Rule{Before: now.Add(-cfg.Retention), Exact: true, Hard: cfg.TrimPolicy == TrimHard})
	}
	h.reportLosses(loss)
	h.pruneConsumers()
	dlqKey := sp.DLQ(t, w.p)
	if cfg.DLQRetention > 0 {
		h.report(retention.TrimOlderHard(w.ctx, w.sub.rdb, dlqKey, now.Add(-cfg.DLQRetention)))("dlq-age")
	}
	if cfg.DLQRetentionMaxLen > 0 {
		h.report(retention.TrimLen(w.ctx, w.sub.rdb, dlqKey, cfg.DLQRetentionMaxLen))("dlq-length")
	}
	payloadKey := func(ref string) string { return sp.Payload(t, w.p, ref) }
	n, next, err := retention.SweepOrphans(w.ctx, w.sub.rdb, w.stream, sp.PayloadIndex(t, w.p), payloadKey, now.Add(-orphanGrace), h.cursor, 500)
	h.cursor = next
	h.report(int64(n), err)("orphaned-payloads")
}

// trim applies one retention rule of the partition (never past what a group still needs,
// unless the rule is hard).
func (h *housekeeper) trim(loss, kind string, rule retention.Rule) {
	w := h.w
	res, err := retention.Trim(w.ctx, w.sub.rdb, w.stream, loss, rule)
	reportTrim(w.sub.logger, w.sub.cfg.Metrics, w.labels(), kind, res, err, w.ctx.Err() == nil)
}

// reportLosses counts and logs the entries of this group that a hard retention cap (this
// member's, another's or a publisher's) removed from the partition before the group acked them.
func (h *housekeeper) reportLosses(loss string) {
	w := h.w
	n, err := retention.TakeLosses(w.ctx, w.sub.rdb, loss, w.sub.cfg.ConsumerGroup)
	switch {
	case err != nil && w.ctx.Err() == nil:
		w.sub.logger.Error("Could not read retention losses", err, watermill.LogFields{"partition": w.p})
	case n > 0:
		w.sub.s.stats.trimmedUnacked.Add(n)
		w.sub.cfg.Metrics.Trimmed(w.labels(), "unacked", n)
		w.sub.logger.Error("A hard retention cap removed entries this group had not acked", nil,
			watermill.LogFields{"partition": w.p, "entries": n})
	}
}

// pruneConsumers removes the group's Redis consumers on the partition that belong to no live
// member and hold no pending entries (each restart of a member with a generated name leaves
// one behind). One idle for less than LeaseTTL may be a member that joined since the last
// heartbeat, and stays.
func (h *housekeeper) pruneConsumers() {
	w := h.w
	live := w.sub.liveMembers()
	if len(live) == 0 {
		return // no heartbeat yet: nothing is known to be dead
	}
	names, err := stream.PruneConsumers(w.ctx, w.sub.rdb, w.stream, w.sub.cfg.ConsumerGroup, w.sub.cfg.LeaseTTL, live)
	switch {
	case err != nil && w.ctx.Err() == nil:
		w.sub.logger.Error("Could not remove the consumers of members that left", err, watermill.LogFields{"partition": w.p})
	case len(names) > 0:
		w.sub.logger.Debug("Removed consumers of members that left", watermill.LogFields{"partition": w.p, "consumers": names})
	}
}

// report logs and counts the outcome of one DLQ or payload retention step.
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
