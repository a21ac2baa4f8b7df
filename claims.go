package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// The partition's pending entries that reach the worker other than by a new read: claimed
// on taking the partition and by the pending scan, claimed from a stale owner, or re-read
// after a lost read reply.

// recover queues entries of this member's pending list that it never received: their read's
// reply was lost, or a stray claim moved them here. Only ids above what the worker has
// received count: the re-read started from an earlier snapshot. One deleted from the stream
// meanwhile is acked: nothing to deliver.
func (w *worker) recover(msgs []stream.Entry) {
	var live, deleted []stream.Entry
	w.mu.Lock()
	for _, m := range msgs {
		switch {
		case !streamid.Less(w.received, m.ID):
		case m.Values == nil:
			deleted = append(deleted, m)
		default:
			live = append(live, m)
		}
	}
	if last := msgs[len(msgs)-1].ID; streamid.Less(w.received, last) {
		w.received = last // past the deleted ones too, or the re-read would return them again
	}
	w.queueLocked(live, w.claimed)
	w.forgetClaimedLocked()
	w.mu.Unlock()
	for _, m := range deleted {
		w.acks.add(m.ID, "")
	}
	if len(live)+len(deleted) == 0 {
		return
	}
	w.sub.logger.Info("Re-read pending entries this member had not received", watermill.LogFields{
		"partition": w.p, "count": len(live) + len(deleted), "first": msgs[0].ID})
	w.wakeRun()
}

// forgetClaimedLocked drops the delivery counts of claimed strays the worker has received
// by now; w.mu is held.
func (w *worker) forgetClaimedLocked() {
	for id := range w.claimed {
		if !streamid.Less(w.received, id) {
			delete(w.claimed, id)
		}
	}
	if len(w.claimed) == 0 {
		w.claimed = nil
	}
}

// requestStrayClaim asks the run loop to claim the entries other consumers hold pending in
// the partition before it takes anything else: a stale owner's late read left some (see
// stream.Read).
func (w *worker) requestStrayClaim() {
	w.mu.Lock()
	w.strays = true
	w.mu.Unlock()
	w.wakeRun()
}

// takeStrays reports and clears a requestStrayClaim.
func (w *worker) takeStrays() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.strays
	w.strays = false
	return s
}

// claimPending moves the partition's pending entries idle for at least minIdle to this
// member and queues them in id order. With minIdle 0 (on taking the partition) that is every
// pending entry of the group: we hold the lease, so nobody else may be working on them.
func (w *worker) claimPending(minIdle time.Duration) bool {
	if w.leaseExpired() { // a claim would take entries away from the next owner
		w.sub.loseLease(w, errLeaseExpired)
		return false
	}
	start := "0-0"
	for {
		msgs, next, err := w.claimAndQueue(minIdle, start)
		if err != nil {
			if stream.IsNoGroup(err) {
				w.sub.requestHeal() // nothing pending to claim in a group that is gone
				return true
			}
			server.ReloadOnConnError(w.ctx, w.sub.rdb, err)
			if w.ctx.Err() == nil {
				w.sub.logger.Error("Could not claim pending entries", err, watermill.LogFields{"partition": w.p})
			}
			return w.ctx.Err() == nil
		}
		if len(msgs) > 0 && !w.drainQueue() {
			return false
		}
		if next == "0-0" || next == "" || len(msgs) == 0 && next == start {
			return true
		}
		start = next
	}
}

// claimAndQueue claims one batch of pending entries idle for minIdle from start and queues
// those the worker does not hold yet, with no ack flush in between (claimMu).
func (w *worker) claimAndQueue(minIdle time.Duration, start string) ([]stream.Entry, string, error) {
	cfg := w.sub.cfg
	w.claimMu.Lock()
	defer w.claimMu.Unlock()
	msgs, next, err := stream.Claim(w.ctx, w.sub.rdb, w.stream, cfg.ConsumerGroup, w.sub.member, minIdle, start, int64(cfg.ClaimBatchSize))
	if err != nil || len(msgs) == 0 {
		return msgs, next, err
	}
	w.push(msgs, w.deliveryCounts(msgs))
	return msgs, next, nil
}

// claimStrays moves the entries other consumers hold pending in the partition to this
// member. It does not queue them: the next read round's re-read of this member's pending
// entries after the last id received returns them in id order, together with any of its
// own whose read reply was lost meanwhile (queueing the claimed ones here would move past
// those). Read rounds that overlap the claim are discarded for this partition (claimGen).
// false means the worker stopped.
func (w *worker) claimStrays() bool {
	if w.leaseExpired() {
		w.sub.loseLease(w, errLeaseExpired)
		return false
	}
	w.bumpClaimGen()
	defer w.bumpClaimGen()
	msgs, err := stream.ClaimOthers(w.ctx, w.sub.rdb, w.stream, w.sub.cfg.ConsumerGroup, w.sub.member, int64(w.sub.cfg.ClaimBatchSize))
	if stream.IsNoGroup(err) {
		w.sub.requestHeal()
		return true
	}
	if err != nil {
		server.ReloadOnConnError(w.ctx, w.sub.rdb, err)
		if w.ctx.Err() == nil {
			// The next read round finds them again and asks once more.
			w.sub.logger.Error("Could not claim entries a stale owner read", err, watermill.LogFields{"partition": w.p})
		}
		return w.ctx.Err() == nil
	}
	if len(msgs) == 0 {
		return true
	}
	counts := w.deliveryCounts(msgs)
	w.mu.Lock()
	if w.claimed == nil {
		w.claimed = map[string]int64{}
	}
	for _, m := range msgs {
		w.claimed[m.ID] = counts[m.ID]
	}
	w.mu.Unlock()
	w.sub.logger.Info("Claimed entries a stale owner read after the takeover", watermill.LogFields{
		"partition": w.p, "count": len(msgs), "first": msgs[0].ID})
	w.fetch.poke()
	return true
}

// bumpClaimGen marks the start and the end of a stray claim: odd while one runs.
func (w *worker) bumpClaimGen() {
	w.mu.Lock()
	w.claimGen++
	w.mu.Unlock()
}

// claimedSince reports whether a stray claim ran, or runs, since gen was read: a read
// round sent then may have read the partition before or after the claim moved entries.
func (w *worker) claimedSince(gen uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return gen != w.claimGen || gen%2 == 1
}

func (w *worker) deliveryCounts(msgs []stream.Entry) map[string]int64 {
	counts, err := stream.DeliveryCounts(w.ctx, w.sub.rdb, w.stream, w.sub.cfg.ConsumerGroup,
		msgs[0].ID, msgs[len(msgs)-1].ID, int64(len(msgs)))
	if err != nil {
		return nil
	}
	return counts
}
