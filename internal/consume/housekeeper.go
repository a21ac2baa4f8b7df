package consume

import (
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/script"
)

// housekeeper applies retention to an owned partition every interval, starting at once:
// the record that its group is live there (so no trim takes it for expired); under memory
// pressure (Redis at or above the high-water mark of maxmemory) every entry every group acked,
// every pressureTrimInterval, whatever MaxLen keeps; the length retention the topic's
// publishers recorded and the time retention (both stop at what a group still needs unless
// hard), the report of this group's entries a hard cap
// removed, DLQ retention by age and length, removal of the consumers of members that left,
// and of offloaded payloads whose entry is gone.
type housekeeper struct {
	d        partDeps
	store    keepStore
	cfg      Retention
	leaseTTL time.Duration           // a consumer idle for less may be a member that just joined
	length   func() retention.Length // what the topic's publishers recorded
	live     func() []string         // the group's live members at the last heartbeat
	pressure func() bool             // Redis memory is at or above the high-water mark
	full     *fullNotice             // the Consumer's: Redis refuses steps at maxmemory
	run      *run.Runner
	cursor   int64 // where the orphan sweep goes on
}

// pressureTrimInterval is how often the housekeeper trims while Redis memory is under
// pressure (at or above the high-water mark): a drained backlog frees its memory within it.
const pressureTrimInterval = time.Second

// keeperDeps are what a housekeeper reads of its subscription and Subscriber each step.
type keeperDeps struct {
	leaseTTL time.Duration           // a consumer idle for less may be a member that just joined
	length   func() retention.Length // what the topic's publishers recorded
	live     func() []string         // the group's live members at the last heartbeat
	pressure func() bool             // Redis memory is at or above the high-water mark
	full     *fullNotice             // the Consumer's
}

func newHousekeeper(d partDeps, cfg Retention, k keeperDeps) *housekeeper {
	return &housekeeper{d: d, store: d.store, cfg: cfg, leaseTTL: k.leaseTTL, length: k.length, live: k.live,
		pressure: k.pressure, full: k.full, run: run.NewRunner()}
}

func (h *housekeeper) start() { h.run.Start(h.loop) }

func (h *housekeeper) stop() { h.run.Stop() }

func (h *housekeeper) loop() {
	next := h.d.clock.Now()
	for {
		if now := h.d.clock.Now(); !now.Before(next) {
			h.step()
			next = now.Add(h.cfg.TrimInterval)
		} else if h.pressure() {
			h.trim("pressure", retention.Rule{Acked: true}, h.d.clock.Now())
		}
		wait := next.Sub(h.d.clock.Now())
		if h.pressure() { // trim what every group acked as it is acked, until there is room
			wait = min(wait, pressureTrimInterval)
		}
		if !h.run.Sleep(h.d.clock, wait) {
			return
		}
	}
}

func (h *housekeeper) step() {
	now := h.d.clock.Now()
	if h.markSeen(now) {
		h.full.room()
	}
	if h.pressure() {
		h.trim("pressure", retention.Rule{Acked: true}, now)
	}
	if length := h.length(); length.MaxLen > 0 {
		h.trim("length", length.Rule(), now)
	}
	if h.cfg.MaxAge > 0 {
		h.trim("age", retention.Rule{Before: now.Add(-h.cfg.MaxAge), Exact: true, Hard: h.cfg.Hard}, now)
	}
	h.reportLosses()
	h.pruneConsumers()
	h.trimDLQ(now)
	h.sweepPayloads(now)
}

// markSeen records the group live on the partition; a group retention had left out for its
// expiry is back, which is logged (reportLosses then tells what it lost). false when the
// record could not be written.
func (h *housekeeper) markSeen(now time.Time) bool {
	since, err := h.store.MarkSeen(h.d.ctx, now)
	switch {
	case err != nil:
		h.failed("Could not record the group live on the partition", err, nil)
	case !since.IsZero():
		h.d.log.Info("Consumer group is live again on the partition after its group expiry: retention waits for it again",
			watermill.LogFields{"expired_since": since})
	}
	return err == nil
}

// trim applies one retention rule of the partition at now (never past what a live group
// still needs, unless the rule is hard).
func (h *housekeeper) trim(kind string, rule retention.Rule, now time.Time) {
	rule.GroupExpiry, rule.Now = h.cfg.GroupExpiry, now
	res, err := h.store.Trim(h.d.ctx, rule)
	if err != nil {
		h.failed("Retention trim failed", err, watermill.LogFields{"rule": kind})
		return
	}
	retention.Report(h.d.log, h.d.count, nil, kind, res)
}

// reportLosses counts and logs the entries of this group that a hard retention cap (this
// member's, another's or a publisher's) removed from the partition before the group acked them.
func (h *housekeeper) reportLosses() {
	n, err := h.store.TakeLosses(h.d.ctx)
	switch {
	case err != nil:
		h.failed("Could not read retention losses", err, nil)
	case n > 0:
		h.d.stats.trimmedUnacked.Add(n)
		h.d.count.Trimmed("unacked", n)
		h.d.log.Error("Retention removed entries this group had not acked (a hard cap, or the group had expired)", nil, watermill.LogFields{"entries": n})
	}
}

// pruneConsumers removes the group's Redis consumers on the partition that belong to no live
// member and hold no pending entries (each restart of a member with a generated name leaves
// one behind). One idle for less than LeaseTTL may be a member that joined since the last
// heartbeat, and stays.
func (h *housekeeper) pruneConsumers() {
	live := h.live()
	if len(live) == 0 {
		return // no heartbeat yet: nothing is known to be dead
	}
	names, err := h.store.PruneConsumers(h.d.ctx, h.leaseTTL, live)
	switch {
	case err != nil:
		h.failed("Could not remove the consumers of members that left", err, nil)
	case len(names) > 0:
		h.d.log.Debug("Removed consumers of members that left", watermill.LogFields{"consumers": names})
	}
}

// trimDLQ applies DLQ retention by age and by length.
func (h *housekeeper) trimDLQ(now time.Time) {
	if h.cfg.DLQMaxAge > 0 {
		n, err := h.store.TrimDLQBefore(h.d.ctx, now.Add(-h.cfg.DLQMaxAge))
		h.report("dlq-age", n, err)
	}
	if h.cfg.DLQMaxLen > 0 {
		n, err := h.store.TrimDLQLen(h.d.ctx, h.cfg.DLQMaxLen)
		h.report("dlq-length", n, err)
	}
}

// sweepPayloads removes, a slice of the index per step, offloaded payloads whose entry is gone.
func (h *housekeeper) sweepPayloads(now time.Time) {
	n, next, err := h.store.SweepOrphans(h.d.ctx, now.Add(-retention.OrphanGrace), h.cursor, 500)
	h.cursor = next
	h.report("orphaned-payloads", int64(n), err)
}

// report logs and counts the outcome of one DLQ or payload retention step.
func (h *housekeeper) report(kind string, n int64, err error) {
	switch {
	case err != nil:
		h.failed("Retention step failed", err, watermill.LogFields{"step": kind})
	case n > 0:
		h.d.count.Trimmed(kind, n)
		h.d.log.Debug("Retention", watermill.LogFields{"step": kind, "removed": n})
	}
}

// failed logs a step that failed: nothing when the partition is stopping; one line for the
// whole Consumer while Redis refuses the steps because it is full (fullNotice), the error
// otherwise.
func (h *housekeeper) failed(what string, err error, fields watermill.LogFields) {
	switch {
	case h.d.ctx.Err() != nil:
	case script.IsOOM(err):
		h.full.say(h.d.log)
	default:
		h.d.log.Error(what, err, fields)
	}
}

// fullNotice says once, for every partition of a Consumer, that Redis refuses the
// housekeepers' bookkeeping because it is at maxmemory, until a step goes through again.
type fullNotice struct{ said atomic.Bool }

func (n *fullNotice) say(log watermill.LoggerAdapter) {
	if !n.said.Swap(true) {
		log.Info("Redis is full (used memory at maxmemory): retention bookkeeping (trim losses, the group's live record, "+
			"orphaned payloads) waits for room; consumers go on draining, and the trims that follow their acks free memory", nil)
	}
}

// room is told a step that went through: the next refusal is said again.
func (n *fullNotice) room() { n.said.Store(false) }
