package streamq

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/run"
)

// subscription is one Subscribe call: one member of the group on one topic, and the place
// that builds its components and writes their start and stop order.
//
// Start (run): a static member's presence keeper (its name was claimed in Subscribe), the
// rebalancer (heartbeat, assignment, acquire and hand over, heal; its first round at once)
// and the renewer (lease renewal). The rebalancer starts a worker per partition it takes
// (see startWorker, and worker for a partition's own order); the workers start their fetcher.
//
// Stop, in this order: the rebalancer and the renewer, so no partition is taken or kept
// alive any more; a static member's presence keeper, then it records that it is closing
// (static.go: no refresh may overwrite that record); then every worker
// (it leaves its fetcher, drains in-flight messages up to CloseTimeout, flushes acks and
// releases its lease, which a static member keeps for its grace instead); then the
// fetchers; then the member leaves the group and the output channel closes.
type subscription struct {
	s      *Subscriber
	cfg    *SubscriberConfig
	clock  clock.Clock
	logger watermill.LoggerAdapter
	topic  string // as subscribed
	view   view
	member string
	leases *lease.Leases
	rebal  *rebalancer
	renew  *renewer
	static *staticMember // nil unless StaticMemberGrace is set
	outlet outlet
	gates  run.Gates             // delivery waits while one is closed: the Subscriber's Pause, the group's
	out    chan *message.Message // the channel Subscribe returns; outlet.out sends on it

	read ReadConfig // Read, with the topic's Topics entry applied

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

func newSubscription(ctx context.Context, s *Subscriber, v view, member string) *subscription {
	cfg := &s.config
	out := make(chan *message.Message)
	id, leaseTTL := watermill.NewShortUUID(), cfg.Membership.LeaseTTL
	if cfg.Membership.StaticMemberGrace > 0 {
		leaseTTL = cfg.Membership.StaticMemberGrace // a crashed static member's partitions wait for it
	}
	sub := &subscription{
		s: s, cfg: cfg, clock: s.clock, topic: v.name, read: cfg.readFor(v.name), view: v, member: member,
		logger:   s.logger.With(watermill.LogFields{"topic": v.name, "consumer": member}),
		leases:   lease.New(cfg.Client, member, id, leaseTTL),
		ctx:      ctx,
		stopping: make(chan struct{}),
		workers:  map[int]*worker{},
		handing:  map[*worker]bool{},
		fetchers: map[int]*fetcher{},
	}
	sub.static = newStaticMember(sub, id)
	sub.out = out
	sub.gates = run.Gates{s.pause, run.NewGate()}
	sub.readCtx, sub.cancelRead = context.WithCancel(context.WithoutCancel(ctx))
	sub.outlet = outlet{out: out, inFlight: s.inFlight, inFlightN: new(atomic.Int64), labels: sub.labels(), ctx: ctx}
	sub.rebal = newRebalancer(ctx, sub.rebalanceDeps())
	sub.renew = newRenewer(ctx, cfg.Client, sub.leases, sub.heldLeases, cfg.Membership.RenewInterval, sub.clock)
	return sub
}

func (sub *subscription) rebalanceDeps() rebalanceDeps {
	cfg := sub.cfg
	membersKey, capsKey := sub.view.members(cfg.ConsumerGroup)
	self := lease.Member{Name: sub.member, Modulo: sub.read.PartitionModulo, Remainder: sub.read.PartitionRemainder, MaxLeased: cfg.Membership.MaxLeasedPartitions}
	members := lease.NewMembership(cfg.Client, membersKey, capsKey, self, cfg.Membership.LeaseTTL)
	if sub.static != nil {
		members.Static(sub.static.inst)
	}
	return rebalanceDeps{
		rdb: cfg.Client, reg: sub.s.reg, leases: sub.leases,
		members: members,
		view:    sub.view, group: cfg.ConsumerGroup, member: sub.member, self: self, share: sub.s.leases.share(sub),
		cfg:   cfg.Membership,
		clock: sub.clock, log: sub.logger, metrics: cfg.Metrics, labels: sub.labels(),
		createGroups: func(ctx context.Context, from, to int) error {
			return sub.s.createGroups(ctx, sub.view, from, to)
		},
		owned:    partitionsOf{sub},
		stopAll:  sub.stop,
		crashAll: sub.crash,
		presence: sub.presence(),
		pause:    sub.gates[1],
		paused:   sub.reportPause,
	}
}

// messages is the channel Subscribe returns.
func (sub *subscription) messages() <-chan *message.Message { return sub.out }

// run starts the background components and blocks until the subscription has shut down.
func (sub *subscription) run() {
	sub.static.start()
	sub.rebal.start()
	sub.renew.start()
	select {
	case <-sub.ctx.Done():
	case <-sub.s.closing:
	case <-sub.stopping:
	}
	sub.stop()
	sub.rebal.stop()
	sub.renew.stop()
	sub.static.stop()
	sub.beginParking()
	sub.shutdownWorkers()
	sub.stopFetchers()
	if !sub.isCrashed() {
		sub.leave()
	}
	if f, ok := sub.cfg.Metrics.(MetricsForgetter); ok {
		f.Forget(sub.labels())
	}
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
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), sub.cfg.Delivery.CloseTimeout)
	defer cancel()
	if err := sub.rebal.d.members.Leave(ctx); err != nil {
		sub.logger.Error("Could not leave the group", err, nil)
	}
}

// labels are the subscription's metric labels (Partition -1: all).
func (sub *subscription) labels() Labels {
	return Labels{Topic: sub.topic, Partition: -1, Group: sub.cfg.ConsumerGroup, Consumer: sub.member}
}

// loseLease stops w at once, keeping everything pending for the next owner.
func (sub *subscription) loseLease(w *worker, cause error) {
	if !w.beginStop() {
		return
	}
	sub.s.stats.leasesLost.Add(1)
	w.d.log.Error("Partition lease lost, stopped delivering from it", cause, nil)
	go w.shutdown(false)
}

// heldLeases are the leases of the running workers, for the renewer.
func (sub *subscription) heldLeases() []heldLease {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := make([]heldLease, 0, len(sub.workers))
	for _, w := range sub.workers {
		if w.isStopping() {
			continue
		}
		w := w
		out = append(out, heldLease{fence: w.d.fence, term: w.d.term, renewed: w.hooks.fetch.poke,
			lost: func(err error) { sub.loseLease(w, err) }})
	}
	return out
}

// reportPause tells the metrics (a PauseReporter) whether the subscription's delivery is
// paused, and since when.
func (sub *subscription) reportPause() {
	if r, ok := sub.cfg.Metrics.(PauseReporter); ok {
		r.Paused(sub.labels(), sub.gates.Since())
	}
}
