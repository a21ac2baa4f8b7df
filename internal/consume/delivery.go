package consume

import (
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/retry"
)

// The delivery loop of one owned partition: it takes entries from the read position in
// order, hands each to a handler (one at a time, or up to MaxInFlightPerPartition), waits
// for its Ack or Nack, and has the settler carry out the decision.

// run claims the partition's pending entries, then delivers what the fetcher reads until
// the worker stops.
func (w *worker) run() {
	defer close(w.runDone)
	w.carryOutage()
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
	w.outlet.count.InFlight(int(w.outlet.inFlightN.Add(1)))
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
		w.d.count.BackpressureWait(clock.Since(w.d.clock, start))
	}
	return true
}

func (w *worker) release() {
	w.outlet.count.InFlight(int(w.outlet.inFlightN.Add(-1)))
	if in := w.outlet.inFlight; in != nil {
		<-in
	}
	<-w.sem
}

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
	var letter *dlq.Record
	if w.d.rules.letters {
		r := dlq.DecodeRecord(e.Values)
		letter = &r
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
	g := msg.Metadata.Get(codec.HeaderRetryGroup)
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
func (w *worker) conclude(e position.Entry, m *message.Message, out retry.Outcome, probe *bool) (done bool, retriedAs string) {
	w.count(out)
	w.d.hint.note(w.d.log, out, m)
	dec := retry.Decide(w.d.clock.Now(), w.d.rules.decision(), w.settle.cfg.retry, out, m, w.outage.Run())
	switch {
	case dec.Verdict == retry.WaitOutage && probe == nil:
		return false, "" // released: the pending scan delivers it again
	case dec.Verdict == retry.WaitOutage:
		return w.waitOutage(dec.Reason, probe), ""
	case out != retry.Stopped && dec.Snoozes == 0:
		w.settledRun(out == retry.Nacked)
	}
	done, retried := w.settle.apply(e, m, dec)
	if retried {
		retriedAs = dlq.OriginalID(m.Metadata, e.ID)
	}
	return done, retriedAs
}

func (w *worker) count(out retry.Outcome) {
	switch out {
	case retry.Acked:
		w.d.stats.acked.Add(1)
		w.d.count.Acked()
	case retry.Nacked:
		w.d.stats.nacked.Add(1)
	}
}

// deliver sends m, the message of entry e, to the output channel and waits for its Ack or
// Nack; letter is the dead letter's record on a DLQ view, else nil. deferred reports an Ack
// of a message its handler deferred (DeferAck).
func (w *worker) deliver(m *message.Message, e position.Entry, count int64, letter *dlq.Record) (out retry.Outcome, deferred bool) {
	// Once stopping, never hand out another entry: a select below would pick a ready output
	// channel at random over the stop signal, and an entry handed out after a skipped one
	// would break the partition's order for the next owner.
	if w.isStopping() || w.msgCtx.Err() != nil {
		return retry.Stopped, false
	}
	// Nor once the lease may have expired (the process was paused, or Redis has not answered
	// a renewal for LeaseTTL): another member may own the partition by now, and handing out
	// a prefetched entry would deliver it twice, out of the new owner's order.
	if w.d.term.Expired() {
		w.d.lost(lease.ErrExpired)
		return retry.Stopped, false
	}
	// Whatever "delayed until" the message carries is history; a new one after a Nack means
	// middleware.DelayOnError just asked for a delay (see delayOnErrorBackoff).
	delete(m.Metadata, delay.DelayedUntilKey)
	delete(m.Metadata, codec.HeaderOutage) // likewise an Outage or a Snooze of the last delivery
	delete(m.Metadata, codec.HeaderSnooze)
	dc := &deliveryCtx{parent: w.msgCtx, d: w.delivery(m, e.ID, count, letter), w: w, entry: e}
	if w.tracer != nil {
		return w.tracedHandOut(dc, m)
	}
	return w.handOut(dc, m)
}

// handOut sends m, with dc as its context, to the output channel and waits for its Ack or
// Nack.
func (w *worker) handOut(dc *deliveryCtx, m *message.Message) (out retry.Outcome, deferred bool) {
	defer dc.settle()
	m.SetContext(dc)
	select {
	case w.outlet.out <- m:
		w.d.stats.delivered.Add(1)
		w.d.count.Consumed()
	case <-w.stop:
		return retry.Stopped, false
	case <-w.msgCtx.Done():
		return retry.Stopped, false
	}
	start := w.d.clock.Now()
	select {
	case <-m.Acked():
		w.d.count.HandleLatency(clock.Since(w.d.clock, start))
		return retry.Acked, dc.deferred.Load() != nil
	case <-m.Nacked():
		w.d.count.HandleLatency(clock.Since(w.d.clock, start))
		return retry.Nacked, false
	case <-w.msgCtx.Done():
		return retry.Stopped, false
	}
}

// tracedHandOut is handOut under tracing hooks: the delivery span's context becomes the
// parent of the message's context, and the span ends with the handler's answer.
func (w *worker) tracedHandOut(dc *deliveryCtx, m *message.Message) (retry.Outcome, bool) {
	ctx, end := w.tracer.StartDelivery(dc.parent, m, &dc.d)
	dc.parent = ctx
	out, deferred := w.handOut(dc, m)
	end(outcomeOf(out, deferred))
	return out, deferred
}

// delivery is what the message's context tells its handler. A dead letter's original id
// is its record's (a letter never retried has no OriginalIDMetadata), never the DLQ entry's.
func (w *worker) delivery(m *message.Message, id string, count int64, letter *dlq.Record) Delivery {
	original := m.Metadata.Get(codec.HeaderOriginalID)
	if letter != nil {
		original = firstNonEmpty(letter.OriginalMessageID, original)
	}
	return Delivery{
		Topic: w.d.topic, Partition: w.d.keys.Index, StreamID: id, Count: count,
		Group: w.d.group(), Consumer: w.d.member,
		Retries: retry.Count(m.Metadata), OriginalID: firstNonEmpty(original, id),
		LastError: m.Metadata.Get(codec.HeaderLastError), Letter: letter,
	}
}

// unmarshal decodes an entry's fields with the configured Unmarshal; DefaultMarshaler's
// format (no Unmarshal) takes the payload from the reply without a copy.
func (w *worker) unmarshal(values map[string]any) (*message.Message, error) {
	if w.cfg.unmarshal == nil {
		return codec.DecodeMessage(values, codec.OwnedBytes)
	}
	return w.cfg.unmarshal(values)
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

func outcomeOf(out retry.Outcome, deferred bool) Outcome {
	switch {
	case deferred:
		return OutcomeDeferred
	case out == retry.Acked:
		return OutcomeAcked
	case out == retry.Nacked:
		return OutcomeNacked
	default:
		return OutcomeStopped
	}
}
