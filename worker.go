package streamq

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// worker delivers one owned partition: it claims the partition's pending entries, then
// takes the entries its fetcher reads, and hands them to the output channel in stream order
// (up to MaxInFlightPerPartition at once), collecting acks.
type worker struct {
	sub      *subscription
	p        int
	stream   string
	leaseKey string
	token    string // owner token of this acquisition: the fence of every script
	fetch    *fetcher
	acks     *acker
	mover    *mover
	keeper   *housekeeper

	// claimMu keeps the pending scan's claim and an ack flush apart: a claim that Redis ran
	// before the flush's XACK must find the acked ids still known (held) when it queues,
	// or they would be delivered again.
	claimMu sync.Mutex

	mu        sync.Mutex
	queue     []entry
	known     map[string]struct{}
	received  string // highest id queued: the member's pending entries after it were lost
	wantMore  bool
	strays    bool             // another consumer holds pending entries of the partition: claim them
	claimGen  uint64           // bumped at the start and end of each stray claim
	claimed   map[string]int64 // delivery counts of claimed strays until their re-read
	renewedAt time.Time

	notify   chan struct{} // cap 1: entries were queued
	stop     chan struct{} // closed when the worker must stop delivering
	stopOnce sync.Once
	shutOnce sync.Once
	runDone  chan struct{}

	ctx        context.Context // Redis calls of run; cancelled on stop
	cancelCtx  context.CancelFunc
	msgCtx     context.Context // parent of message contexts
	cancelMsgs context.CancelFunc
	sem        chan struct{}
	handlers   sync.WaitGroup
}

// labels are the metric labels of this partition.
func (w *worker) labels() Labels {
	return Labels{Topic: w.sub.topic, Partition: w.p, Group: w.sub.cfg.ConsumerGroup, Consumer: w.sub.member}
}

type entry struct {
	id     string
	values map[string]any
	count  int64
}

// startWorker starts delivering partition p, leased with token by a request sent at acquired.
func (sub *subscription) startWorker(p int, token string, acquired time.Time) {
	w := &worker{
		token:     token,
		sub:       sub,
		p:         p,
		stream:    sub.view.stream(p),
		leaseKey:  sub.view.lease(p, sub.cfg.ConsumerGroup),
		known:     map[string]struct{}{},
		renewedAt: acquired,
		notify:    make(chan struct{}, 1),
		stop:      make(chan struct{}),
		runDone:   make(chan struct{}),
		sem:       make(chan struct{}, sub.cfg.MaxInFlightPerPartition),
	}
	w.ctx, w.cancelCtx = context.WithCancel(context.WithoutCancel(sub.ctx))
	w.msgCtx, w.cancelMsgs = context.WithCancel(sub.ctx)
	w.acks = newAcker(w)
	w.mover = newMover(w)
	w.keeper = newHousekeeper(w)
	w.fetch = sub.fetcherFor(p)
	sub.mu.Lock()
	sub.workers[p] = w
	sub.workerWG.Add(1)
	sub.mu.Unlock()
	sub.logger.Debug("Partition acquired", watermill.LogFields{"partition": p})
	go w.acks.loop()
	go w.mover.loop()
	go w.keeper.loop()
	go w.run()
}

// beginStop stops delivery; true when this call did it.
func (w *worker) beginStop() bool {
	did := false
	w.stopOnce.Do(func() {
		close(w.stop)
		w.cancelCtx()
		did = true
	})
	return did
}

func (w *worker) isStopping() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// renewed records a successful renewal sent at t, and wakes the fetcher, which skips a
// worker whose lease is about to lapse.
func (w *worker) renewed(t time.Time) {
	w.mu.Lock()
	w.renewedAt = t
	w.mu.Unlock()
	w.fetch.poke()
}

func (w *worker) lastRenewed() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.renewedAt
}

// run claims the partition's pending entries, then delivers what the fetcher reads until
// the worker stops.
func (w *worker) run() {
	defer close(w.runDone)
	if !w.claimPending(0) {
		return
	}
	w.fetch.add(w)
	scan := time.NewTimer(w.sub.cfg.PendingScanInterval)
	defer scan.Stop()
	for {
		e, ok := w.next(scan)
		if !ok || !w.dispatch(e) {
			return
		}
	}
}

// next returns the next queued entry, asking the fetcher for more when the queue is empty.
// It runs the pending scan when its timer fires. false means the worker stopped.
func (w *worker) next(scan *time.Timer) (entry, bool) {
	for {
		select {
		case <-scan.C:
			w.claimPending(w.sub.cfg.ClaimIdle)
			scan.Reset(w.sub.cfg.PendingScanInterval)
		default:
		}
		if w.isStopping() {
			return entry{}, false
		}
		if w.takeStrays() && !w.claimStrays() {
			return entry{}, false
		}
		if e, ok := w.pop(); ok {
			return e, true
		}
		w.fetch.poke()
		select {
		case <-w.stop:
			return entry{}, false
		case <-w.notify:
		case <-scan.C:
			w.claimPending(w.sub.cfg.ClaimIdle)
			scan.Reset(w.sub.cfg.PendingScanInterval)
		}
	}
}

// pop takes the next queued entry. When the queue falls to the low-water mark (half a batch)
// it asks the fetcher for the next batch, so it arrives while this one is handled.
func (w *worker) pop() (entry, bool) {
	w.mu.Lock()
	if len(w.queue) == 0 {
		w.wantMore = true
		w.mu.Unlock()
		return entry{}, false
	}
	e := w.queue[0]
	w.queue[0] = entry{}
	w.queue = w.queue[1:]
	refill := !w.wantMore && len(w.queue) <= w.lowWater()
	if refill {
		w.wantMore = true
	}
	w.mu.Unlock()
	if refill {
		w.fetch.poke()
	}
	return e, true
}

// lowWater is the queue length at which the next batch is fetched: prefetch stays bounded
// by 1.5 batches per partition.
func (w *worker) lowWater() int { return w.sub.cfg.BatchCount / 2 }

// push queues entries read or claimed for this partition, skipping ids already held.
func (w *worker) push(msgs []stream.Entry, counts map[string]int64) {
	w.mu.Lock()
	w.queueLocked(msgs, counts)
	w.mu.Unlock()
	w.wakeRun()
}

// queueLocked queues msgs not held yet; w.mu is held.
func (w *worker) queueLocked(msgs []stream.Entry, counts map[string]int64) {
	for _, m := range msgs {
		if _, dup := w.known[m.ID]; dup {
			continue
		}
		w.known[m.ID] = struct{}{}
		c := int64(1)
		if n, ok := counts[m.ID]; ok {
			c = n
		}
		w.queue = append(w.queue, entry{id: m.ID, values: m.Values, count: c})
	}
	// Reads and claims return ids in order: the last one is the highest.
	if n := len(msgs); n > 0 && streamid.Less(w.received, msgs[n-1].ID) {
		w.received = msgs[n-1].ID
	}
	w.wantMore = len(w.queue) <= w.lowWater()
}

func (w *worker) wakeRun() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// readPosition is what the fetcher needs of the worker for a read round, under one lock:
// whether it wants entries, the highest id queued so far ("0-0" before any), and the
// stray-claim generation the round starts from.
func (w *worker) readPosition() (want bool, after string, gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	after = w.received
	if after == "" {
		after = "0-0"
	}
	return w.wantMore, after, w.claimGen
}

// forget drops acked entries from the ids the worker holds.
func (w *worker) forget(acked []stream.Acked) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range acked {
		delete(w.known, e.ID)
	}
}

// drainQueue dispatches everything queued (claimed entries go before new reads).
func (w *worker) drainQueue() bool {
	for {
		e, ok := w.pop()
		if !ok {
			return true
		}
		if !w.dispatch(e) {
			return false
		}
	}
}

// dispatch hands e to a handler goroutine once the in-flight limits allow.
func (w *worker) dispatch(e entry) bool {
	select {
	case w.sem <- struct{}{}:
	default:
		if !w.waitSlot() {
			return false
		}
	}
	if in := w.sub.inFlight; in != nil {
		select {
		case in <- struct{}{}:
		case <-w.stop:
			<-w.sem
			return false
		}
	}
	w.handlers.Add(1)
	w.sub.cfg.Metrics.InFlight(w.sub.labels(), int(w.sub.inFlightN.Add(1)))
	if w.ordered() {
		// One message at a time: handle it on the worker's goroutine, no hand-off.
		w.handleSlot(e)
		return true
	}
	go w.handleSlot(e)
	return true
}

// ordered reports whether the partition delivers one message at a time with no
// subscription-wide cap, so the worker goroutine can handle it itself.
func (w *worker) ordered() bool { return cap(w.sem) == 1 && w.sub.inFlight == nil }

func (w *worker) handleSlot(e entry) {
	defer w.handlers.Done()
	defer w.release()
	w.handle(e)
}

// waitSlot waits for a free in-flight slot of the partition, recording the wait.
func (w *worker) waitSlot() bool {
	start := time.Now()
	select {
	case w.sem <- struct{}{}:
		w.sub.cfg.Metrics.BackpressureWait(w.labels(), time.Since(start))
		return true
	case <-w.stop:
		return false
	}
}

func (w *worker) release() {
	w.sub.cfg.Metrics.InFlight(w.sub.labels(), int(w.sub.inFlightN.Add(-1)))
	if in := w.sub.inFlight; in != nil {
		<-in
	}
	<-w.sem
}

type outcome int

const (
	acked outcome = iota
	nacked
	stopped
)

// handle delivers one entry until it is acked, retried, dead-lettered, or the worker stops.
func (w *worker) handle(e entry) {
	if !w.loadPayload(&e) {
		return
	}
	msg, err := w.unmarshal(e.values)
	if err != nil {
		w.poison(e, err)
		return
	}
	if g := msg.Metadata.Get(RetryGroupMetadata); g != "" && g != w.sub.cfg.ConsumerGroup && !w.sub.view.dlq {
		w.acks.add(e.id, "") // another group's retry
		return
	}
	next := msg
	for count := e.count; ; count++ {
		m, out := w.deliver(next, e.id, count)
		if w.settle(m, e, out) {
			return
		}
		next = m.Copy() // a redelivery needs a fresh message: Ack and Nack are one-shot
	}
}

// settle acts on one delivery's outcome; false means deliver the entry again.
func (w *worker) settle(m *message.Message, e entry, out outcome) bool {
	switch out {
	case acked:
		w.sub.s.stats.acked.Add(1)
		w.sub.cfg.Metrics.Acked(w.labels())
		return w.onAck(m, e)
	case nacked:
		w.sub.s.stats.nacked.Add(1)
		return w.onNack(m, m, e)
	default:
		return true
	}
}

// deliver sends m to the output channel and waits for its Ack or Nack.
func (w *worker) deliver(m *message.Message, id string, count int64) (*message.Message, outcome) {
	// Once stopping, never hand out another entry: a select below would pick a ready output
	// channel at random over the stop signal, and an entry handed out after a skipped one
	// would break the partition's order for the next owner.
	if w.isStopping() || w.msgCtx.Err() != nil {
		return m, stopped
	}
	// Nor once the lease may have expired (the process was paused, or Redis has not answered
	// a renewal for LeaseTTL): another member may own the partition by now, and handing out
	// a prefetched entry would deliver it twice, out of the new owner's order.
	if w.leaseExpired() {
		w.sub.loseLease(w, errLeaseExpired)
		return m, stopped
	}
	msg := m
	// Whatever "delayed until" the message carries is history; a new one after a Nack means
	// middleware.DelayOnError just asked for a delay (see delayOnErrorBackoff).
	delete(m.Metadata, delay.DelayedUntilKey)
	dc := &deliveryCtx{parent: w.msgCtx, d: delivery{
		topic: w.sub.topic, partition: w.p, streamID: id, count: count,
		group: w.sub.cfg.ConsumerGroup, consumer: w.sub.member,
		retries: retryCount(msg.Metadata), originalID: firstNonEmpty(msg.Metadata.Get(OriginalIDMetadata), id),
		lastError: msg.Metadata.Get(LastErrorMetadata),
	}}
	defer dc.settle()
	m.SetContext(dc)
	select {
	case w.sub.out <- m:
		w.sub.s.stats.delivered.Add(1)
		w.sub.cfg.Metrics.Consumed(w.labels())
	case <-w.stop:
		return m, stopped
	case <-w.msgCtx.Done():
		return m, stopped
	}
	start := time.Now()
	select {
	case <-m.Acked():
		w.sub.cfg.Metrics.HandleLatency(w.labels(), time.Since(start))
		return m, acked
	case <-m.Nacked():
		w.sub.cfg.Metrics.HandleLatency(w.labels(), time.Since(start))
		return m, nacked
	case <-w.msgCtx.Done():
		return m, stopped
	}
}

// shutdown stops the worker. Graceful: wait up to CloseTimeout for in-flight messages,
// flush acks and release the lease. Otherwise (lease lost, crash): cancel in-flight messages
// and keep everything pending for the next owner.
func (w *worker) shutdown(graceful bool) {
	w.beginStop()
	w.shutOnce.Do(func() { w.doShutdown(graceful) })
}

func (w *worker) doShutdown(graceful bool) {
	sub := w.sub
	w.fetch.remove(w)
	if !graceful {
		w.cancelMsgs()
	}
	w.drainHandlers()
	w.mover.close()
	w.keeper.close()
	w.acks.close()
	if graceful {
		ctx, cancel := sub.bgCtx()
		w.acks.flush(ctx)
		if _, err := sub.leases.Release(ctx, w.leaseKey, w.token); err != nil {
			sub.logger.Error("Could not release lease", err, watermill.LogFields{"partition": w.p})
		}
		cancel()
	}
	sub.mu.Lock()
	if sub.workers[w.p] == w {
		delete(sub.workers, w.p)
	}
	sub.mu.Unlock()
	sub.logger.Debug("Partition released", watermill.LogFields{"partition": w.p, "graceful": graceful})
	sub.workerWG.Done()
}

// drainHandlers waits up to CloseTimeout for the run loop and in-flight messages (an
// ordered partition handles its message on the run loop), then cancels them.
func (w *worker) drainHandlers() {
	done := make(chan struct{})
	go func() {
		<-w.runDone
		w.handlers.Wait()
		close(done)
	}()
	t := time.NewTimer(w.sub.cfg.CloseTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		w.sub.logger.Info("In-flight messages not acked within CloseTimeout; they stay pending", watermill.LogFields{"partition": w.p})
	}
	w.cancelMsgs()
	<-done
}

// unmarshal decodes an entry's fields with the configured Unmarshaler; DefaultMarshaler's
// decoding takes the payload from the reply without a copy.
func (w *worker) unmarshal(values map[string]any) (*message.Message, error) {
	if _, ok := w.sub.cfg.Unmarshaler.(DefaultMarshaler); ok {
		return unmarshalReply(values)
	}
	return w.sub.cfg.Unmarshaler.Unmarshal(values)
}
