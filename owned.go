package streamq

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keyorder"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// partitionsOf is the subscription's set of running partitions, as the rebalancer sees it.
type partitionsOf struct{ sub *subscription }

func (o partitionsOf) has(p int) bool { return o.sub.worker(p) != nil }

func (o partitionsOf) take(p int, token string, sent time.Time) { o.sub.startWorker(p, token, sent) }

func (o partitionsOf) count() int {
	o.sub.mu.Lock()
	defer o.sub.mu.Unlock()
	return len(o.sub.workers)
}

func (o partitionsOf) highestAcked(p int) string {
	if w := o.sub.worker(p); w != nil {
		return w.acks.highestAcked()
	}
	return ""
}

// handOver gracefully stops the workers of partitions not in keep.
func (o partitionsOf) handOver(keep []int) {
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
	w := &worker{stop: make(chan struct{}), runDone: make(chan struct{}), outlet: sub.outlet,
		outage: newPartOutage(sub.cfg.Retry.Outage, sub.topic, p), sem: make(chan struct{}, sub.cfg.Delivery.MaxInFlightPerPartition)}
	w.gates = append(append(run.Gates{}, sub.gates...), w.outage.gate)
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

// partDeps are the dependencies of partition p's components; the reports they make reach
// the subscription through w.
func (sub *subscription) partDeps(w *worker, p int, token string, sent time.Time) partDeps {
	cfg := sub.cfg
	k := sub.view.partition(p, cfg.ConsumerGroup)
	ctx, cancel := context.WithCancel(context.WithoutCancel(sub.ctx))
	w.cancelCtx = cancel
	return partDeps{
		rdb: cfg.Client, keys: k, fence: fence.Fence{Key: k.Lease, Token: token}, member: sub.member,
		rules: sub.view.rules, term: lease.NewTerm(sub.clock, cfg.Membership.LeaseTTL, sent).Within(sub.presence()), clock: sub.clock,
		log: sub.logger.With(watermill.LogFields{"partition": p}),
		count: partCounters{stats: &sub.s.stats, metrics: cfg.Metrics, tracer: cfg.Tracer,
			labels: Labels{Topic: sub.topic, Partition: p, Group: cfg.ConsumerGroup, Consumer: sub.member}},
		ctx: ctx, stop: w.stop,
		lost: func(err error) { sub.loseLease(w, err) },
		heal: sub.rebal.requestHeal,
		hint: sub.nackHint(),
	}
}

// buildComponents builds w's read position and components from w.d.
func (sub *subscription) buildComponents(w *worker) {
	cfg, d := sub.cfg, w.d
	w.cfg = deliveryConfig{delivery: cfg.Delivery, reclaim: cfg.Reclaim, payloadRetry: cfg.Retry.MoverInterval,
		unmarshaler: cfg.Unmarshaler, maxHeld: max(maxHeldByKey, 10*sub.read.BatchCount)}
	if cfg.Delivery.OrderByKey {
		w.order = keyorder.New[position.Entry]()
	}
	w.pos = position.New(sub.read.BatchCount)
	fetch := sub.fetcherFor(d.keys.Index)
	gate := &sync.Mutex{}
	w.acks = newAcker(d, cfg.Acks, gate, w.pos)
	w.claims = &claimer{d: d, cfg: cfg.Reclaim, pos: w.pos, gate: gate, poke: fetch.poke}
	w.feed = &feed{stream: d.keys.Read, pos: w.pos, term: d.term, stop: d.stop, log: d.log,
		skip: func(id string) { w.acks.add(id, "") }}
	w.settle = &settler{d: d, base: sub.ctx, acks: w.acks, pause: w.pause,
		cfg: settleConfig{retry: cfg.Retry, payloads: cfg.Payloads, marshaler: cfg.Marshaler, stepTimeout: cfg.Delivery.CloseTimeout}}
	if d.rules.background {
		w.mover = newMover(d, cfg.Retry, sub.view.space, sub.rebal.partitions)
		w.keeper = newHousekeeper(d, cfg.Retention, cfg.Membership.LeaseTTL, sub.rebal.lengthRetention, sub.rebal.liveMembers, sub.s.memoryPressure)
		w.settle.wake = w.mover.wakeAt
	}
	w.hooks = workerHooks{
		fetch: fetch,
		release: func(ctx context.Context) error {
			if sub.keepsLease(w) { // kept for the next process of this static member, for the grace
				_, err := sub.leases.Renew(ctx, d.keys.Lease, d.fence.Token)
				return err
			}
			_, err := sub.leases.Release(ctx, d.keys.Lease, d.fence.Token)
			return err
		},
		exited: func() { sub.exited(w) },
	}
}

// exited removes a worker that has shut down and gives its lease slot back to the
// Subscriber's MaxLeasedPartitions.
func (sub *subscription) exited(w *worker) {
	sub.mu.Lock()
	if sub.workers[w.d.keys.Index] == w {
		delete(sub.workers, w.d.keys.Index)
	}
	delete(sub.handing, w)
	sub.mu.Unlock()
	sub.s.leases.share(sub).release()
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
	cfg := sub.cfg
	f := newFetcher(sub.readCtx, fetchDeps{rdb: cfg.Client, group: cfg.ConsumerGroup, member: sub.member, batch: int64(sub.read.BatchCount),
		block: sub.read.BlockTime, clock: sub.clock, log: sub.logger, heal: sub.rebal.requestHeal, gates: sub.gates})
	sub.fetchers[key] = f
	f.start()
	return f
}
