package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/position"
)

// The delivery loop of one owned partition: it takes entries from the read position in
// order, hands each to a handler (one at a time, or up to MaxInFlightPerPartition), waits
// for its Ack or Nack, and has the settler carry out the decision.

// run claims the partition's pending entries, then delivers what the fetcher reads until
// the worker stops.
func (w *worker) run() {
	defer close(w.runDone)
	if !w.claims.pending(0, w.drainQueue) {
		return
	}
	w.hooks.fetch.add(w.feed)
	scan := w.d.clock.NewTimer(w.cfg.reclaim.ScanInterval)
	defer scan.Stop()
	for {
		e, ok := w.next(scan)
		if !ok || !w.dispatch(e) {
			return
		}
	}
}

// next returns the next queued entry, asking the fetcher for more when the queue is empty.
// It runs the pending scan when its timer fires, and claims strays first when a read round
// found some. false means the worker stopped.
func (w *worker) next(scan clock.Timer) (position.Entry, bool) {
	for {
		select {
		case <-scan.C():
			w.scanPending(scan)
		default:
		}
		if w.isStopping() {
			return position.Entry{}, false
		}
		if w.pos.TakeStrays() && !w.claims.strays() {
			return position.Entry{}, false
		}
		if e, ok := w.pop(); ok {
			return e, true
		}
		w.hooks.fetch.poke()
		select {
		case <-w.stop:
			return position.Entry{}, false
		case <-w.pos.Wake():
		case <-scan.C():
			w.scanPending(scan)
		}
	}
}

func (w *worker) scanPending(scan clock.Timer) {
	w.claims.pending(w.cfg.reclaim.Idle, w.drainQueue)
	scan.Reset(w.cfg.reclaim.ScanInterval)
}

// pop takes the next queued entry; at the low-water mark it asks the fetcher for the next
// batch, so it arrives while this one is handled.
func (w *worker) pop() (position.Entry, bool) {
	e, ok, refill := w.pos.Pop()
	if ok && refill {
		w.hooks.fetch.poke()
	}
	return e, ok
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

// dispatch hands e to a handler goroutine once delivery is not paused and the in-flight
// limits allow (under OrderByKey, once no earlier message of its key is with a handler).
func (w *worker) dispatch(e position.Entry) bool {
	if w.order != nil {
		return w.dispatchKeyed(e)
	}
	if !w.takeTurn() {
		return false
	}
	if w.ordered() {
		// One message at a time: handle it on the loop's goroutine, no hand-off.
		w.handleSlot(e)
		return true
	}
	go w.handleSlot(e)
	return true
}

// takeTurn waits until delivery is not paused and takes the in-flight slots of one handler;
// false means the worker stopped first.
func (w *worker) takeTurn() bool {
	if w.gates.Paused() && !w.gates.WaitOpen(w.stop) {
		return false
	}
	if !w.takeSlots() {
		return false
	}
	w.handlers.Add(1)
	w.d.count.metrics.InFlight(w.outlet.labels, int(w.outlet.inFlightN.Add(1)))
	return true
}

// ordered reports whether the partition delivers one message at a time with no
// subscription-wide cap, so the loop's goroutine can handle it itself.
func (w *worker) ordered() bool { return cap(w.sem) == 1 && w.outlet.inFlight == nil }

func (w *worker) handleSlot(e position.Entry) {
	defer w.handlers.Done()
	defer w.release()
	w.handle(e)
}

// takeSlots takes an in-flight slot of the partition (MaxInFlightPerPartition), then one of
// the Subscriber (MaxInFlight), and records any wait for them as one BackpressureWait.
// false means the worker stopped first; it then holds neither.
func (w *worker) takeSlots() bool {
	var start time.Time // set once a slot is not free at once
	take := func(slots chan struct{}) bool {
		select {
		case slots <- struct{}{}:
			return true
		default:
		}
		if start.IsZero() {
			start = w.d.clock.Now()
		}
		select {
		case slots <- struct{}{}:
			return true
		case <-w.stop:
			return false
		}
	}
	if !take(w.sem) {
		return false
	}
	if in := w.outlet.inFlight; in != nil && !take(in) {
		<-w.sem
		return false
	}
	if !start.IsZero() {
		w.d.count.metrics.BackpressureWait(w.d.count.labels, clock.Since(w.d.clock, start))
	}
	return true
}

func (w *worker) release() {
	w.d.count.metrics.InFlight(w.outlet.labels, int(w.outlet.inFlightN.Add(-1)))
	if in := w.outlet.inFlight; in != nil {
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

// handle delivers one entry until a decision settles it or the worker stops: entries that
// cannot be delivered (payload gone, undecodable, another group's retry) are settled
// before any handler sees them. retriedAs is the message's original id when it was settled
// by a retry.
func (w *worker) handle(e position.Entry) (retriedAs string) {
	if ref := payload.Ref(e.Values); ref != "" && w.othersOffloaded(e) {
		// Another group's replay with its payload stored apart: not loaded, and the ack
		// counts this group as done with the payload, which goes once every group is.
		w.acks.add(e.ID, ref)
		return ""
	}
	if !w.settle.loadPayload(&e, w.cfg.payloadRetry) {
		return ""
	}
	msg, err := w.unmarshal(e.Values)
	if err != nil {
		w.settle.poison(e, err)
		return ""
	}
	if w.othersRetry(msg) {
		w.acks.add(e.ID, "")
		return ""
	}
	var letter *DeadLetterInfo
	if w.d.rules.letters {
		letter = letterOf(e.Values)
	}
	next := msg
	var probe bool // the last delivery was an outage's probe
	for count := e.Count; ; count++ {
		out, deferred := w.deliver(next, e, count, letter)
		if deferred {
			return "" // the handler settles it later through its DeferredAck
		}
		if done, retriedAs := w.conclude(e, next, out, &probe); done {
			return retriedAs
		}
		next = next.Copy() // a redelivery needs a fresh message: Ack and Nack are one-shot
	}
}

// othersRetry reports a retry or replay that only another group delivers (x-retry-group).
func (w *worker) othersRetry(msg *message.Message) bool {
	g := msg.Metadata.Get(RetryGroupMetadata)
	return g != "" && g != w.d.group() && w.d.rules.retries
}

// othersOffloaded reports an entry with an offloaded payload that only another group
// delivers, read without its payload; an entry that does not decode so is left to handle.
func (w *worker) othersOffloaded(e position.Entry) bool {
	if !w.d.rules.retries {
		return false
	}
	msg, err := w.unmarshal(e.Values)
	return err == nil && w.othersRetry(msg)
}

// conclude counts a delivery's outcome, decides what it means and carries the decision out;
// done false means deliver the entry again; retriedAs is the original id of m when a retry
// of it was written ("" otherwise). probe is whether the delivery was an outage's probe,
// and is set for the next one (nil: a deferred ack, which cannot hold its message).
func (w *worker) conclude(e position.Entry, m *message.Message, out outcome, probe *bool) (done bool, retriedAs string) {
	w.count(out)
	w.d.hint.note(w.d.log, out, m)
	dec := decide(w.d.clock.Now(), w.d.rules, w.settle.cfg.retry, out, m, w.outage.run())
	switch {
	case dec.verdict == waitOutage && probe == nil:
		return false, "" // released: the pending scan delivers it again
	case dec.verdict == waitOutage:
		return w.waitOutage(dec.reason, probe), ""
	case out != stopped && dec.snoozes == 0:
		w.settledRun(out == nacked)
	}
	done, retried := w.settle.apply(e, m, dec)
	if retried {
		retriedAs = firstNonEmpty(m.Metadata.Get(OriginalIDMetadata), e.ID)
	}
	return done, retriedAs
}

func (w *worker) count(out outcome) {
	switch out {
	case acked:
		w.d.count.stats.acked.Add(1)
		w.d.count.metrics.Acked(w.d.count.labels)
	case nacked:
		w.d.count.stats.nacked.Add(1)
	}
}

// deliver sends m, the message of entry e, to the output channel and waits for its Ack or
// Nack; letter is the dead letter's record on a DLQ view, else nil. deferred reports an Ack
// of a message its handler deferred (DeferAck).
func (w *worker) deliver(m *message.Message, e position.Entry, count int64, letter *DeadLetterInfo) (out outcome, deferred bool) {
	// Once stopping, never hand out another entry: a select below would pick a ready output
	// channel at random over the stop signal, and an entry handed out after a skipped one
	// would break the partition's order for the next owner.
	if w.isStopping() || w.msgCtx.Err() != nil {
		return stopped, false
	}
	// Nor once the lease may have expired (the process was paused, or Redis has not answered
	// a renewal for LeaseTTL): another member may own the partition by now, and handing out
	// a prefetched entry would deliver it twice, out of the new owner's order.
	if w.d.term.Expired() {
		w.d.lost(errLeaseExpired)
		return stopped, false
	}
	// Whatever "delayed until" the message carries is history; a new one after a Nack means
	// middleware.DelayOnError just asked for a delay (see delayOnErrorBackoff).
	delete(m.Metadata, delay.DelayedUntilKey)
	clearOutcomeMarks(m.Metadata) // likewise an Outage or a Snooze of the last delivery
	dc := &deliveryCtx{parent: w.msgCtx, d: w.delivery(m, e.ID, count, letter), w: w, entry: e}
	if w.d.count.tracer != nil {
		return w.tracedHandOut(dc, m)
	}
	return w.handOut(dc, m)
}

// handOut sends m, with dc as its context, to the output channel and waits for its Ack or
// Nack.
func (w *worker) handOut(dc *deliveryCtx, m *message.Message) (out outcome, deferred bool) {
	defer dc.settle()
	m.SetContext(dc)
	select {
	case w.outlet.out <- m:
		w.d.count.stats.delivered.Add(1)
		w.d.count.metrics.Consumed(w.d.count.labels)
	case <-w.stop:
		return stopped, false
	case <-w.msgCtx.Done():
		return stopped, false
	}
	start := w.d.clock.Now()
	select {
	case <-m.Acked():
		w.d.count.metrics.HandleLatency(w.d.count.labels, clock.Since(w.d.clock, start))
		return acked, dc.deferred.Load() != nil
	case <-m.Nacked():
		w.d.count.metrics.HandleLatency(w.d.count.labels, clock.Since(w.d.clock, start))
		return nacked, false
	case <-w.msgCtx.Done():
		return stopped, false
	}
}

// delivery is what the message's context tells its handler. A dead letter's original id
// is its record's (a letter never retried has no OriginalIDMetadata), never the DLQ entry's.
func (w *worker) delivery(m *message.Message, id string, count int64, letter *DeadLetterInfo) delivery {
	original := m.Metadata.Get(OriginalIDMetadata)
	if letter != nil {
		original = firstNonEmpty(letter.OriginalMessageID, original)
	}
	return delivery{
		topic: w.outlet.labels.Topic, partition: w.d.keys.Index, streamID: id, count: count,
		group: w.d.group(), consumer: w.d.member,
		retries: retryCount(m.Metadata), originalID: firstNonEmpty(original, id),
		lastError: m.Metadata.Get(LastErrorMetadata), letter: letter,
	}
}

// unmarshal decodes an entry's fields with the configured Unmarshaler; DefaultMarshaler's
// decoding takes the payload from the reply without a copy.
func (w *worker) unmarshal(values map[string]any) (*message.Message, error) {
	if _, ok := w.cfg.unmarshaler.(DefaultMarshaler); ok {
		return unmarshalReply(values)
	}
	return w.cfg.unmarshaler.Unmarshal(values)
}

// pause waits d unless the worker stops first; true means it stopped.
func (w *worker) pause(d time.Duration) bool {
	if d <= 0 {
		return w.isStopping()
	}
	t := w.d.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return false
	case <-w.stop:
		return true
	}
}
