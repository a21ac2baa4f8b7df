package streamq

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/partition"
)

// subscription is one Subscribe call: one member of the group on one topic. Its background
// components, started by run and stopped in this order on shutdown:
//
//	rebalancer (heartbeat, assignment, acquire/handover) and renewer (lease renewal) stop first,
//	so no partition is taken or kept alive any more;
//	then each partition worker stops: its fetch is detached, in-flight messages drain (up to
//	CloseTimeout), acks are flushed and the lease is released;
//	then the fetchers stop, the member leaves the group and the output channel closes.
type subscription struct {
	s       *Subscriber
	cfg     *SubscriberConfig
	rdb     redis.UniversalClient
	logger  watermill.LoggerAdapter
	topic   string // as subscribed
	view    view
	member  string
	leases  *lease.Leases
	members *lease.Membership
	out     chan *message.Message

	ctx       context.Context // the Subscribe context: values for message contexts
	stopping  chan struct{}   // closed when shutdown starts
	healReq   chan struct{}   // cap 1: wakes the rebalancer for a heal
	healDue   atomic.Bool     // something is missing in Redis (see heal)
	stopOnce  sync.Once
	crashed   bool
	inFlight  chan struct{} // MaxInFlight semaphore, nil when unbounded
	inFlightN atomic.Int64  // unacked messages, for the InFlight gauge

	mu          sync.Mutex
	parts       int            // partitions joined: the topic's count once it exists, else 0
	meta        partition.Meta // the topic's metadata as last read
	metaReadAt  time.Time
	waitingOnce sync.Once // logs once that the topic does not exist yet
	live        []string  // the group's live members at the last heartbeat
	workers     map[int]*worker
	fetchers    map[int]*fetcher
	loops       sync.WaitGroup
	workerWG    sync.WaitGroup
}

func newSubscription(ctx context.Context, s *Subscriber, v view, member string) *subscription {
	cfg := &s.config
	topic := v.name
	membersKey, capsKey := v.members(cfg.ConsumerGroup)
	self := lease.Member{Name: member, Modulo: cfg.PartitionModulo, Remainder: cfg.PartitionRemainder, MaxLeased: cfg.MaxLeasedPartitions}
	sub := &subscription{
		s:        s,
		cfg:      cfg,
		rdb:      cfg.Client,
		logger:   s.logger.With(watermill.LogFields{"topic": topic, "consumer": member}),
		topic:    topic,
		view:     v,
		member:   member,
		leases:   lease.New(cfg.Client, member, watermill.NewShortUUID(), cfg.LeaseTTL),
		members:  lease.NewMembership(cfg.Client, membersKey, capsKey, self, cfg.LeaseTTL),
		out:      make(chan *message.Message),
		ctx:      ctx,
		stopping: make(chan struct{}),
		healReq:  make(chan struct{}, 1),
		workers:  map[int]*worker{},
		fetchers: map[int]*fetcher{},
	}
	if cfg.MaxInFlight > 0 {
		sub.inFlight = make(chan struct{}, cfg.MaxInFlight)
	}
	return sub
}

// run starts the background components and blocks until the subscription has shut down.
func (sub *subscription) run() {
	sub.loops.Add(2)
	go sub.rebalanceLoop()
	go sub.renewLoop()
	select {
	case <-sub.ctx.Done():
	case <-sub.s.closing:
	case <-sub.stopping:
	}
	sub.stop()
	sub.loops.Wait()
	sub.shutdownWorkers()
	sub.stopFetchers()
	if !sub.crashed {
		sub.leave()
	}
	if f, ok := sub.cfg.Metrics.(MetricsForgetter); ok {
		f.Forget(sub.labels())
	}
	close(sub.out)
	sub.logger.Debug("Subscription closed", nil)
}

func (sub *subscription) stop() { sub.stopOnce.Do(func() { close(sub.stopping) }) }

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

// bgCtx is the context of Redis calls made during shutdown: the Subscribe context's values
// without its cancellation, bounded by CloseTimeout.
func (sub *subscription) bgCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(sub.ctx), sub.cfg.CloseTimeout)
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

func (sub *subscription) leave() {
	ctx, cancel := sub.bgCtx()
	defer cancel()
	if err := sub.members.Leave(ctx); err != nil {
		sub.logger.Error("Could not leave the group", err, nil)
	}
}

// labels are the subscription's metric labels (Partition -1: all).
func (sub *subscription) labels() Labels {
	return Labels{Topic: sub.topic, Partition: -1, Group: sub.cfg.ConsumerGroup, Consumer: sub.member}
}

// reportPartitions updates the partition gauges after a rebalance round.
func (sub *subscription) reportPartitions(n int) {
	eligible := 0
	self := lease.Member{Modulo: sub.cfg.PartitionModulo, Remainder: sub.cfg.PartitionRemainder}
	for p := 0; p < n; p++ {
		if self.Eligible(p) {
			eligible++
		}
	}
	sub.mu.Lock()
	leased := len(sub.workers)
	sub.mu.Unlock()
	m, l := sub.cfg.Metrics, sub.labels()
	m.EligiblePartitions(l, eligible)
	m.LeasedPartitions(l, leased)
	m.MaxLeasedPartitions(l, sub.cfg.MaxLeasedPartitions)
}

// wait blocks for d or until the subscription stops; false means it stopped.
func (sub *subscription) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-sub.stopping:
		return false
	}
}

// loopCtx is cancelled when the subscription stops; background loops talk to Redis with it.
// The caller must call the returned cancel.
func (sub *subscription) loopCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(sub.ctx))
	go func() {
		select {
		case <-sub.stopping:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}
