package streamq

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/lease"
)

// staticMember is what static membership (StaticMemberGrace) adds to a subscription: the
// process's hold on the member's name in the group (lease.Instance), its presence and the
// keeper that renews it, and whether a graceful shutdown keeps the leases.
//
// Names: Subscribe claims the name before anything starts. Nobody holds it, its holder left
// (a Close) or was silent for the presence window W (a crash): the name is this process's,
// and its rebalancer, whose first round runs as soon as the subscription starts, takes over
// the leases earlier processes of the name still hold (Leases.Reclaim: their tokens are
// fenced out). A holder that may still be there is waited for, at most W after its last
// refresh; one that refreshes meanwhile is a live process with the same name, and Subscribe
// returns ErrConsumerNameInUse.
//
// Presence: the presence keeper (presence.go) refreshes the record every W/3, apart from
// the rebalance loop. Each refresh vouches for the process for W: the record says until when
// in server time (W from the server's clock when the refresh ran), and the process's
// presence term runs W from the refresh's send time, so it ends first. Every partition's term
// ends with the presence: a process that could not refresh for W (frozen, cut off) stops
// delivering before a successor may take its name and leases. A restart after a crash waits
// for the dead process's last refresh to be W old: at most W, less the time the dead process
// was already silent.
//
// Leases: a static member's leases live StaticMemberGrace in Redis (the process's own term
// stays LeaseTTL), so a crashed member's partitions wait for it that long. A graceful
// shutdown renews them for the grace instead of releasing them (except those handed over to
// another member) and leaves the group: the others wait for the leases, the next process
// takes them back at once.
type staticMember struct {
	inst     *lease.Instance
	presence *lease.Term
	keeper   *presenceKeeper
	parking  atomic.Bool // a graceful shutdown: the workers keep their leases for the grace
}

// minPresenceWindow is the shortest presence window: a refresh every 100ms at least leaves
// room for a pause of the process or the network before the presence lapses.
const minPresenceWindow = 300 * time.Millisecond

// presenceWindow is the presence window W of a static member whose reads block for block:
// three quarters of RebalanceInterval, so a restarted process holds its partitions again
// within one RebalanceInterval of its start (it waits at most W, then its first rebalance
// round takes them); W spans three refreshes, so one failed refresh does not end the
// presence. At least three BlockTimes (a read is sent only while the presence lasts one more
// BlockTime, and while refreshes succeed at least two thirds of W are left), at least
// minPresenceWindow, never longer than LeaseTTL.
func presenceWindow(cfg *SubscriberConfig, block time.Duration) time.Duration {
	return min(max(cfg.Membership.RebalanceInterval*3/4, 3*block, minPresenceWindow), cfg.Membership.LeaseTTL)
}

// newStaticMember returns the static part of sub, member of its group as process id; nil
// when static membership is off.
func newStaticMember(sub *subscription, id string) *staticMember {
	cfg := sub.cfg
	if cfg.Membership.StaticMemberGrace <= 0 {
		return nil
	}
	w := presenceWindow(cfg, sub.read.BlockTime)
	st := &staticMember{
		inst:     lease.NewInstance(cfg.Client, sub.view.instances(cfg.ConsumerGroup), sub.member, id, w, 10*cfg.Membership.LeaseTTL),
		presence: lease.NewTerm(sub.clock, w, time.Time{}), // none until the name is claimed
	}
	st.keeper = newPresenceKeeper(sub.ctx, presenceDeps{
		rdb: cfg.Client, inst: st.inst, term: st.presence, period: w / 3,
		clock: sub.clock, log: sub.logger, superseded: sub.crash,
	})
	return st
}

// start starts renewing the presence (after the name was claimed); nothing for a member
// that is not static.
func (st *staticMember) start() {
	if st != nil {
		st.keeper.start()
	}
}

// stop stops renewing the presence: after it returns, no refresh touches the record.
func (st *staticMember) stop() {
	if st != nil {
		st.keeper.stop()
	}
}

// presence is the term every partition's term ends with: the static member's presence, nil
// for other members.
func (sub *subscription) presence() *lease.Term {
	if sub.static == nil {
		return nil
	}
	return sub.static.presence
}

// claimName takes the member's name for this process before the subscription starts: at
// once when nobody holds it, its holder left or its holder was silent for the presence
// window; after waiting out a holder that may still be there (a crash a moment ago: at most
// one presence window; a Close under way); never when the holder refreshes its presence
// meanwhile: ErrConsumerNameInUse.
func (sub *subscription) claimName(ctx context.Context) error {
	st := sub.static
	if st == nil {
		return nil
	}
	var first lease.Claim
	for {
		sent := sub.clock.Now()
		c, err := st.inst.Claim(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("subscribe to %q: %w", sub.topic, err)
		case c.Taken:
			st.presence.Renewed(sent)
			sub.logClaim(c)
			return nil
		case first.State == "":
			first = c
			sub.logger.Info("The ConsumerName was in use a moment ago: waiting for its process to be gone",
				watermill.LogFields{"holder_state": c.State, "wait": c.Left.String()})
		case c.State == "live" && (c.Holder != first.Holder || c.Until > first.Until):
			return fmt.Errorf("subscribe to %q as consumer %q of group %q: %w (it renewed its presence while this one waited)",
				sub.topic, sub.member, sub.cfg.ConsumerGroup, ErrConsumerNameInUse)
		}
		if err := sub.waitToClaim(ctx, min(c.Left+time.Millisecond, sub.cfg.Membership.RebalanceInterval)); err != nil {
			return err
		}
	}
}

func (sub *subscription) logClaim(c lease.Claim) {
	if c.How == "gone" {
		sub.logger.Info("Took the ConsumerName over from a process silent for the presence window (presumed crashed): "+
			"taking back its partitions", nil)
		return
	}
	sub.logger.Debug("Claimed the ConsumerName", watermill.LogFields{"how": c.How})
}

// waitToClaim waits d, or until ctx is done or the Subscriber closes.
func (sub *subscription) waitToClaim(ctx context.Context, d time.Duration) error {
	t := sub.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("subscribe to %q: %w", sub.topic, ctx.Err())
	case <-sub.s.closing:
		return ErrSubscriberClosed
	}
}

// discard drops a subscription that never started (its name was refused).
func (sub *subscription) discard() {
	sub.cancelRead()
	sub.rebal.cancel()
	sub.renew.cancel()
	sub.static.stop()
}

// beginParking starts a static member's graceful shutdown: it records that the process is
// closing (a successor waits for it meanwhile) and has the workers keep their leases,
// renewed for the grace, instead of releasing them. A process whose name another one took
// over shuts down as if crashed: its leases and membership are the successor's.
func (sub *subscription) beginParking() {
	st := sub.static
	if st == nil || sub.isCrashed() || sub.s.leaveOnClose.Load() {
		return // a LeaveOnClose hands the partitions over and frees the name, as any member
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), sub.cfg.Delivery.CloseTimeout)
	defer cancel()
	mine, err := st.inst.Closing(ctx, 2*sub.cfg.Delivery.CloseTimeout+st.inst.Window())
	switch {
	case err != nil:
		sub.logger.Error("Could not record the Close of this static member: a successor may take its partitions before it flushed its acks", err, nil)
	case !mine:
		sub.crash()
		return
	}
	st.parking.Store(true)
}

// keepsLease reports whether w, shutting down gracefully, keeps its lease for a successor
// of this static member instead of releasing it: not when it was handed over to another
// member.
func (sub *subscription) keepsLease(w *worker) bool {
	if sub.static == nil || !sub.static.parking.Load() {
		return false
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return !sub.handing[w]
}

// heartbeat heartbeats the membership. A static member whose name another process took
// over stops the subscription the way a crash would (no ack flush, no release, no leave: its
// leases and membership entry are the successor's now); its presence keeper, not the
// heartbeat, renews its presence.
func (r *rebalancer) heartbeat(ctx context.Context) ([]lease.Member, error) {
	live, err := r.d.members.Heartbeat(ctx)
	if errors.Is(err, lease.ErrSuperseded) {
		r.d.log.Error("Another process took over this ConsumerName (it found this one silent for the presence window, "+
			"or it runs with the same name): the subscription stops", err, nil)
		r.d.crashAll()
	}
	return live, err
}

// present reports whether the member may take partitions: a static member only while its
// presence lasts (else a successor may hold its name already).
func (r *rebalancer) present() bool {
	return r.d.presence == nil || !r.d.presence.Expired()
}

// acquire takes partition p's lease with token; a static member also takes it over from an
// earlier process of its name.
func (r *rebalancer) acquire(ctx context.Context, p int, token string) (bool, error) {
	key := r.d.view.lease(p, r.d.group)
	if r.d.presence == nil {
		return r.d.leases.Acquire(ctx, key, token)
	}
	held, took, err := r.d.leases.Reclaim(ctx, key, token)
	if took {
		r.d.log.Info("Took the partition back from an earlier process of this member", watermill.LogFields{"partition": p})
	}
	return held, err
}
