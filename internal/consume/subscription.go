package consume

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/store"
)

// shared is what a subscription shares with the Consumer's other subscriptions: the config,
// the topic registry, the lease budget (MaxLeasedPartitions), the counters, the nack hint,
// the in-flight cap, the Consumer's pause gate and its memory pressure, whether a static
// member's Close hands its partitions over, and the Consumer's closing.
type shared struct {
	cfg          *Config
	reg          *partition.Registry
	budget       *lease.Budget
	stats        *counts
	hint         *nackHint
	inFlight     chan struct{} // MaxInFlight semaphore; nil when unbounded
	pause        *run.Gate
	pressure     func() bool
	full         *fullNotice
	leaveOnClose *atomic.Bool
	closing      <-chan struct{}
}

// subscription is one Subscribe call: one member of the group on one topic, and the place
// that builds its components and writes their start and stop order.
//
// Start (run): a static member's presence keeper (its name was claimed in Subscribe), the
// rebalancer (heartbeat, assignment, acquire and hand over, heal; its first round at once)
// and the renewer (lease renewal). The rebalancer starts a worker per partition it takes
// (see startWorker, and worker for a partition's own order); the workers start their fetcher.
//
// Stop, in this order: the rebalancer, so no partition is taken any more; a static member's
// presence keeper, then it records that it is closing (lease.StaticMember.Park: no refresh
// may overwrite that record); then every worker (it leaves its fetcher, drains in-flight
// messages up to CloseTimeout, flushes acks and releases its lease, which a static member
// keeps for its grace instead) while the renewer keeps the leases alive, so a handler slower
// than LeaseTTL still gets its ack applied; then the renewer and the fetchers; then the
// member leaves the group and the output channel closes.
type subscription struct {
	shared
	clock  clock.Clock
	logger watermill.LoggerAdapter
	view   keys.View
	rules  topicRules
	read   Read // how this topic is read
	member string
	count  Counters // the subscription's (Partition -1)
	reader *store.Reader
	leases *lease.Leases
	rebal  *lease.Rebalancer
	renew  *lease.Renewer
	static *lease.StaticMember // nil unless StaticMemberGrace is set
	outlet outlet
	gates  run.Gates             // delivery waits while one is closed: the Consumer's Pause, the group's
	out    chan *message.Message // the channel Subscribe returns; outlet.out sends on it

	ctx        context.Context // the Subscribe context: values for message contexts
	stopping   chan struct{}   // closed when shutdown starts
	stopOnce   sync.Once
	readCtx    context.Context // the fetchers' reads: cancelled when shutdown starts
	cancelRead context.CancelFunc

	mu       sync.Mutex
	crashed  bool
	workers  map[int]*worker
	handing  map[*worker]bool // workers handed over to another member, until they exit
	fetchers map[int]*fetcher
	workerWG sync.WaitGroup
}

func newSubscription(ctx context.Context, sh shared, v keys.View, member string) *subscription {
	cfg := sh.cfg
	out := make(chan *message.Message)
	id, leaseTTL := watermill.NewShortUUID(), cfg.Membership.LeaseTTL
	if cfg.Membership.StaticMemberGrace > 0 {
		leaseTTL = cfg.Membership.StaticMemberGrace // a crashed static member's partitions wait for it
	}
	sub := &subscription{
		shared: sh, clock: cfg.Clock, view: v, rules: rulesFor(v.DLQ), read: cfg.Read(v.Name), member: member,
		logger:   cfg.Log.With(watermill.LogFields{"topic": v.Name, "consumer": member}),
		count:    cfg.Metrics.Bind(Labels{Topic: v.Name, Partition: -1, Group: cfg.Group, Consumer: member}),
		reader:   store.NewReader(cfg.Client, cfg.Group, member),
		leases:   lease.New(cfg.Client, member, id, leaseTTL),
		ctx:      ctx,
		out:      out,
		stopping: make(chan struct{}),
		workers:  map[int]*worker{},
		handing:  map[*worker]bool{},
		fetchers: map[int]*fetcher{},
	}
	sub.static = lease.NewStaticMember(ctx, lease.StaticDeps{
		Client: cfg.Client, View: v, Group: cfg.Group, Name: member, ID: id, Config: cfg.Membership.lease(),
		Block: sub.read.BlockTime, Clock: sub.clock, Log: sub.logger, Superseded: sub.crash,
	})
	sub.gates = run.Gates{sh.pause, run.NewGate()}
	sub.readCtx, sub.cancelRead = context.WithCancel(context.WithoutCancel(ctx))
	sub.outlet = outlet{out: out, inFlight: sh.inFlight, inFlightN: new(atomic.Int64), count: sub.count, ctx: ctx}
	sub.rebal = lease.NewRebalancer(ctx, sub.rebalancerDeps())
	sub.renew = lease.NewRenewer(ctx, lease.RenewerDeps{Client: cfg.Client, Leases: sub.leases, Held: sub.heldLeases,
		Interval: cfg.Membership.RenewInterval, Clock: sub.clock})
	return sub
}

func (sub *subscription) rebalancerDeps() lease.RebalancerDeps {
	cfg := sub.cfg
	membersKey, capsKey := sub.view.Members(cfg.Group)
	self := member.Member{Name: sub.member, Modulo: sub.read.Modulo, Remainder: sub.read.Remainder, MaxLeased: cfg.Membership.MaxLeased}
	members := member.NewMembership(cfg.Client, membersKey, capsKey, self, cfg.Membership.LeaseTTL)
	if inst := sub.static.Instance(); inst != nil {
		members.Static(inst)
	}
	return lease.RebalancerDeps{
		Client: cfg.Client, Registry: sub.reg, Leases: sub.leases, Members: members,
		View: sub.view, Group: cfg.Group, Member: sub.member, Self: self, Share: sub.budget.Share(sub),
		Config: cfg.Membership.lease(), DeclaresGroup: sub.rules.declaresGroup,
		Clock: sub.clock, Log: sub.logger, Gauges: sub.count,
		CreateGroups: func(ctx context.Context, from, to int) error {
			return createGroups(ctx, cfg, sub.view, from, to)
		},
		Owned:    partitionsOf{sub},
		StopAll:  sub.stop,
		CrashAll: sub.crash,
		Presence: sub.static.Presence(),
		Pause:    sub.gates[1],
		Paused:   sub.reportPause,
	}
}

// messages is the channel Subscribe returns.
func (sub *subscription) messages() <-chan *message.Message { return sub.out }

// run starts the background components and blocks until the subscription has shut down.
func (sub *subscription) run() {
	sub.static.Start()
	sub.rebal.Start()
	sub.renew.Start()
	select {
	case <-sub.ctx.Done():
	case <-sub.closing:
	case <-sub.stopping:
	}
	sub.stop()
	sub.rebal.Stop()
	sub.static.Stop()
	sub.beginParking()
	sub.shutdownWorkers()
	sub.renew.Stop()
	sub.stopFetchers()
	if !sub.isCrashed() {
		sub.leave()
	}
	sub.count.Forget()
	close(sub.out)
	sub.logger.Debug("Subscription closed", nil)
}

// stop starts the shutdown: a blocked read returns at once.
func (sub *subscription) stop() {
	sub.stopOnce.Do(func() {
		close(sub.stopping)
		sub.cancelRead()
	})
}

// crash marks the subscription as crashed (no flush, no release, no leave) and stops it.
func (sub *subscription) crash() {
	sub.mu.Lock()
	sub.crashed = true
	sub.mu.Unlock()
	sub.stop()
}

func (sub *subscription) isCrashed() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.crashed
}

func (sub *subscription) shutdownWorkers() {
	sub.mu.Lock()
	ws := make([]*worker, 0, len(sub.workers))
	for _, w := range sub.workers {
		ws = append(ws, w)
	}
	sub.mu.Unlock()
	graceful := !sub.isCrashed()
	for _, w := range ws {
		go w.shutdown(graceful)
	}
	sub.workerWG.Wait()
}

func (sub *subscription) stopFetchers() {
	sub.mu.Lock()
	fs := sub.fetchers
	sub.fetchers = map[int]*fetcher{}
	sub.mu.Unlock()
	for _, f := range fs {
		f.stop()
	}
}

func (sub *subscription) leave() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), sub.cfg.Dispatch.CloseTimeout)
	defer cancel()
	if err := sub.rebal.Leave(ctx); err != nil {
		sub.logger.Error("Could not leave the group", err, nil)
	}
}

// loseLease stops w at once, keeping everything pending for the next owner. A worker
// already draining on a graceful stop (a handover) that loses its lease meanwhile is lost
// too: its acks can no longer be applied, so it stops waiting for its handlers, and the loss
// is counted and logged like any other.
func (sub *subscription) loseLease(w *worker, cause error) {
	if !w.beginStop() && !w.loseDrain() {
		return
	}
	sub.stats.leasesLost.Add(1)
	w.d.log.Error("Partition lease lost, stopped delivering from it", cause, nil)
	// A fenced step also answers "lost" when the stream is gone: before the next round takes
	// the partition again, the rebalancer checks what still exists (a topic or group deleted
	// by force stops the subscription instead of being leased and joined again).
	sub.rebal.RequestHeal()
	go w.shutdown(false)
}

// heldLeases are the leases the renewer keeps alive: those of the running workers and of
// the workers draining on a graceful stop (worker.keepsLease).
func (sub *subscription) heldLeases() []lease.HeldLease {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := make([]lease.HeldLease, 0, len(sub.workers))
	for _, w := range sub.workers {
		if !w.keepsLease() {
			continue
		}
		w := w
		out = append(out, lease.HeldLease{Fence: w.fence, Term: w.d.term, Renewed: w.hooks.fetch.poke,
			Lost: func(err error) { sub.loseLease(w, err) }})
	}
	return out
}

// reportPause tells the counters whether the subscription's delivery is paused, and since
// when.
func (sub *subscription) reportPause() { sub.count.Paused(sub.gates.Since()) }

// claimName takes the member's name for this process before the subscription starts (a
// static member: lease.StaticMember.Claim); nothing for a member that is not static.
func (sub *subscription) claimName(ctx context.Context) error {
	err := sub.static.Claim(ctx, func(d time.Duration) error {
		return sub.waitToClaim(ctx, min(d, sub.cfg.Membership.RebalanceInterval))
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lease.ErrNameInUse):
		return fmt.Errorf("subscribe to %q as consumer %q of group %q: %w (it renewed its presence while this one waited)",
			sub.view.Name, sub.member, sub.cfg.Group, sub.cfg.Errors.NameInUse)
	case errors.Is(err, sub.cfg.Errors.Closed):
		return err
	default:
		return fmt.Errorf("subscribe to %q: %w", sub.view.Name, err)
	}
}

// waitToClaim waits d, or until ctx is done or the Consumer closes.
func (sub *subscription) waitToClaim(ctx context.Context, d time.Duration) error {
	t := sub.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-sub.closing:
		return sub.cfg.Errors.Closed
	}
}

// discard drops a subscription that never started (its name was refused).
func (sub *subscription) discard() {
	sub.cancelRead()
	sub.rebal.Cancel()
	sub.renew.Cancel()
	sub.static.Stop()
}

// beginParking starts a static member's graceful shutdown: it records that the process is
// closing and has the workers keep their leases for the grace. A process whose name another
// one took over shuts down as if crashed: its leases and membership are the successor's.
func (sub *subscription) beginParking() {
	if sub.static == nil || sub.isCrashed() || sub.leaveOnClose.Load() {
		return // a LeaveOnClose hands the partitions over and frees the name, as any member
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), sub.cfg.Dispatch.CloseTimeout)
	defer cancel()
	if sub.static.Park(ctx, 2*sub.cfg.Dispatch.CloseTimeout) {
		sub.crash()
	}
}

// keepsLease reports whether w, shutting down gracefully, keeps its lease for a successor
// of this static member instead of releasing it: not when it was handed over to another
// member.
func (sub *subscription) keepsLease(w *worker) bool {
	if !sub.static.Parking() {
		return false
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return !sub.handing[w]
}
