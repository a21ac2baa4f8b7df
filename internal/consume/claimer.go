package consume

import (
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/stream"
)

// claimer moves a partition's pending entries to this member: every pending entry of the
// group when the partition is taken, those idle for Reclaim.Idle on each pending scan, and the
// entries a stale owner read after the takeover (strays). It reports what it claimed to the
// read position and nothing else.
type claimer struct {
	d     partDeps
	store claimStore
	cfg   Reclaim
	pos   *position.Position
	gate  *sync.Mutex // shared with the acker: a claim and an ack flush never interleave
	poke  func()      // asks the fetcher for a read round
}

// pending moves the partition's pending entries idle for at least minIdle to this member and
// queues them in id order, handing each batch to deliver before claiming the next. With
// minIdle 0 (on taking the partition) that is every pending entry of the group: we hold the
// lease, so nobody else may be working on them. false means the partition stopped.
func (c *claimer) pending(minIdle time.Duration, deliver func() bool) bool {
	if c.d.term.Expired() { // a claim would take entries away from the next owner
		c.d.lost(lease.ErrExpired)
		return false
	}
	start := "0-0"
	for {
		msgs, next, err := c.claimBatch(minIdle, start)
		if err != nil {
			return c.failed(err, "Could not claim pending entries")
		}
		if len(msgs) > 0 && !deliver() {
			return false
		}
		if next == "0-0" || next == "" || len(msgs) == 0 && next == start {
			return true
		}
		start = next
	}
}

// claimBatch claims one batch of pending entries idle for minIdle from start and queues
// those the position does not hold yet, with no ack flush in between.
func (c *claimer) claimBatch(minIdle time.Duration, start string) ([]stream.Entry, string, error) {
	c.gate.Lock()
	defer c.gate.Unlock()
	msgs, next, err := c.store.Claim(c.d.ctx, minIdle, start, int64(c.cfg.BatchSize))
	if err != nil || len(msgs) == 0 {
		return msgs, next, err
	}
	c.pos.Push(msgs, c.deliveryCounts(msgs))
	return msgs, next, nil
}

// strays moves the entries other consumers hold pending in the partition to this member.
// It does not queue them: the next read round's re-read of this member's pending entries
// after the last id received returns them in id order, together with any of its own whose
// read reply was lost meanwhile (queueing the claimed ones here would move past those).
// Read rounds that overlap the claim are not applied (position.BeginClaim). false means
// the partition stopped.
func (c *claimer) strays() bool {
	if c.d.term.Expired() {
		c.d.lost(lease.ErrExpired)
		return false
	}
	end := c.pos.BeginClaim()
	defer end()
	msgs, err := c.store.ClaimOthers(c.d.ctx, int64(c.cfg.BatchSize))
	if err != nil {
		// The next read round finds them again and asks once more.
		return c.failed(err, "Could not claim entries a stale owner read")
	}
	if len(msgs) == 0 {
		return true
	}
	c.pos.Claimed(c.deliveryCounts(msgs))
	c.d.log.Info("Claimed entries a stale owner read after the takeover", watermill.LogFields{
		"count": len(msgs), "first": msgs[0].ID})
	c.poke()
	return true
}

// failed handles a failed claim: a missing group is healed (nothing to claim in it), other
// errors are logged unless the partition is stopping. false means it stopped.
func (c *claimer) failed(err error, what string) bool {
	if stream.IsNoGroup(err) {
		c.d.heal()
		return true
	}
	if c.d.ctx.Err() == nil {
		c.d.log.Error(what, err, nil)
	}
	return c.d.ctx.Err() == nil
}

func (c *claimer) deliveryCounts(msgs []stream.Entry) map[string]int64 {
	counts, err := c.store.DeliveryCounts(c.d.ctx, msgs[0].ID, msgs[len(msgs)-1].ID, int64(len(msgs)))
	if err != nil {
		return nil
	}
	return counts
}
