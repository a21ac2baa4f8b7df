package consume

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keyorder"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/store"
)

// partitionsOf is the subscription's set of running partitions, as the rebalancer sees it
// (lease.Partitions).
type partitionsOf struct{ sub *subscription }

var _ lease.Partitions = partitionsOf{}

func (o partitionsOf) Has(p int) bool { return o.sub.worker(p) != nil }

func (o partitionsOf) Take(p int, token string, sent time.Time) { o.sub.startWorker(p, token, sent) }

func (o partitionsOf) Count() int {
	o.sub.mu.Lock()
	defer o.sub.mu.Unlock()
	return len(o.sub.workers)
}

func (o partitionsOf) HighestAcked(p int) string {
	if w := o.sub.worker(p); w != nil {
		return w.acks.highestAcked()
	}
	return ""
}

// HandOver gracefully stops the workers of partitions not in keep.
func (o partitionsOf) HandOver(keep []int) {
	kept := make(map[int]bool, len(keep))
	for _, p := range keep {
		kept[p] = true
	}
	sub := o.sub
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for p, w := range sub.workers {
		if !kept[p] && w.beginStop() {
			sub.handing[w] = true
			sub.logger.Debug("Handing partition over", watermill.LogFields{"partition": p})
			go w.shutdown(true)
		}
	}
}

// worker returns the worker of partition p, nil when this member does not own it.
func (sub *subscription) worker(p int) *worker {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.workers[p]
}

// startWorker starts delivering partition p, leased with token by a request sent at sent:
// it builds the partition's dependencies once and every component from them.
func (sub *subscription) startWorker(p int, token string, sent time.Time) {
	cfg := sub.cfg
	w := &worker{stop: make(chan struct{}), runDone: make(chan struct{}), outlet: sub.outlet, tracer: cfg.Hooks,
		outage: retry.NewOutage(cfg.Retry.decisions().Outage, sub.view.Name, p), sem: make(chan struct{}, cfg.Dispatch.MaxInFlightPerPartition)}
	w.gates = append(append(run.Gates{}, sub.gates...), w.outage.Gate())
	w.d = sub.partDeps(w, p, token, sent)
	w.msgCtx, w.cancelMsgs = context.WithCancel(sub.ctx)
	sub.buildComponents(w)
	sub.mu.Lock()
	sub.workers[p] = w
	sub.workerWG.Add(1)
	sub.mu.Unlock()
	w.d.log.Debug("Partition acquired", nil)
	w.start()
}

// partDeps are the dependencies of partition p's components, its store built once; the
// reports they make reach the subscription through w.
func (sub *subscription) partDeps(w *worker, p int, token string, sent time.Time) partDeps {
	cfg := sub.cfg
	k := sub.view.Partition(p, cfg.Group)
	w.fence = fence.Fence{Key: k.Lease, Token: token}
	ctx, cancel := context.WithCancel(context.WithoutCancel(sub.ctx))
	w.cancelCtx = cancel
	return partDeps{
		topic: sub.view.Name, store: store.NewPartition(cfg.Client, k, w.fence, sub.member), keys: k, member: sub.member,
		rules: sub.rules, term: lease.NewTerm(sub.clock, cfg.Membership.LeaseTTL, sent).Within(sub.static.Presence()), clock: sub.clock,
		log:   sub.logger.With(watermill.LogFields{"partition": p}),
		count: cfg.Metrics.Bind(Labels{Topic: sub.view.Name, Partition: p, Group: cfg.Group, Consumer: sub.member}),
		stats: sub.stats, ctx: ctx, stop: w.stop,
		lost: func(err error) { sub.loseLease(w, err) },
		heal: sub.rebal.RequestHeal,
		hint: sub.nackHint(),
	}
}

// buildComponents builds w's read position and components from w.d.
func (sub *subscription) buildComponents(w *worker) {
	cfg, d := sub.cfg, w.d
	w.cfg = deliveryConfig{delivery: cfg.Dispatch, reclaim: cfg.Reclaim, payloadRetry: cfg.Retry.MoverInterval,
		unmarshal: cfg.Unmarshal, maxHeld: max(maxHeldByKey, 10*sub.read.BatchCount)}
	if cfg.Dispatch.OrderByKey {
		w.order = keyorder.New[position.Entry]()
	}
	w.pos = position.New(sub.read.BatchCount)
	w.outageStore = d.store
	fetch := sub.fetcherFor(d.keys.Index)
	gate := &sync.Mutex{}
	w.acks = newAcker(d, cfg.Acks, gate, w.pos)
	w.claims = &claimer{d: d, store: d.store, cfg: cfg.Reclaim, pos: w.pos, gate: gate, poke: fetch.poke}
	w.feed = &feed{stream: d.keys.Read, pos: w.pos, term: d.term, stop: d.stop, log: d.log,
		skip: func(id string) { w.acks.add(id, "") }}
	w.settle = &settler{d: d, store: d.store, base: sub.ctx, acks: w.acks, pause: w.pause,
		cfg: settleConfig{retry: cfg.Retry.decisions(), payloads: cfg.Payloads, marshal: marshalOf(cfg), stepTimeout: cfg.Dispatch.CloseTimeout, hooks: cfg.Hooks}}
	if d.rules.background {
		w.mover = newMover(d, cfg.Retry, sub.rebal.Partitions)
		w.keeper = newHousekeeper(d, cfg.Retention, keeperDeps{leaseTTL: cfg.Membership.LeaseTTL,
			length: sub.rebal.LengthRetention, live: sub.rebal.LiveMembers, pressure: sub.pressure, full: sub.full})
		w.settle.wake = w.mover.wakeAt
	}
	w.hooks = workerHooks{fetch: fetch, release: sub.releaseOf(w), exited: func() { sub.exited(w) }}
}

// releaseOf is what w does with its lease on a graceful stop: release it, or keep it for the
// next process of this static member, for the grace.
func (sub *subscription) releaseOf(w *worker) func(context.Context) error {
	return func(ctx context.Context) error {
		if sub.keepsLease(w) {
			_, err := sub.leases.Renew(ctx, w.fence.Key, w.fence.Token)
			return err
		}
		_, err := sub.leases.Release(ctx, w.fence.Key, w.fence.Token)
		return err
	}
}

// exited removes a worker that has shut down and gives its lease slot back to the
// Consumer's MaxLeasedPartitions.
func (sub *subscription) exited(w *worker) {
	sub.mu.Lock()
	if sub.workers[w.d.keys.Index] == w {
		delete(sub.workers, w.d.keys.Index)
	}
	delete(sub.handing, w)
	sub.mu.Unlock()
	sub.budget.Share(sub).Release()
	sub.workerWG.Done()
}

// fetcherFor returns (starting it if needed) the fetcher serving partition p: one for every
// partition on a single node or Sentinel, one per partition on a Cluster.
func (sub *subscription) fetcherFor(p int) *fetcher {
	key := 0
	if server.Clustered(sub.cfg.Client) {
		key = p
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if f, ok := sub.fetchers[key]; ok {
		return f
	}
	f := newFetcher(sub.readCtx, fetchDeps{reader: sub.reader, batch: int64(sub.read.BatchCount),
		block: sub.read.BlockTime, clock: sub.clock, log: sub.logger, heal: sub.rebal.RequestHeal, gates: sub.gates})
	sub.fetchers[key] = f
	f.start()
	return f
}
