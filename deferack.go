package streamq

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/stream"
)

// ErrNotDelivered is returned by DeferAck for a message a streamq Subscriber did not
// deliver (or whose context is not the delivery's).
var ErrNotDelivered = errors.New("not a message delivered by a streamq Subscriber")

// DeferredAck is a delivered message whose acknowledgement its handler put off (DeferAck):
// the partition moved on, and the entry stays pending for this member until Ack or Nack.
// Its methods are safe for concurrent use; the first Ack or Nack settles it, later calls
// return nil.
type DeferredAck struct {
	w   *worker
	e   position.Entry
	msg *message.Message

	mu      sync.Mutex
	settled bool
}

// deferKey finds a delivery's context itself, for DeferAck.
type deferCtxKey struct{}

var deferKey deferCtxKey

// DeferAck lets a handler finish msg without acknowledging it, for processing that
// completes later (a checkpoint, a batch written elsewhere). Call it in the handler, then
// return as usual: once msg is acked (the Router acks when the handler returns nil), the
// partition delivers its next message, and msg's entry stays pending for this member until
// the returned handle's Ack or Nack.
//
//   - Ack acknowledges the entry, fenced by the partition's lease like every ack; Nack
//     retries or dead-letters it by the retry policy, as a nack in the handler would.
//   - Entries still unsettled when the partition is handed over (Close, a rebalance, a lost
//     lease) are delivered again by its next owner; their handles then return ErrLeaseLost.
//     The pending scan does not take them from their live owner.
//   - A deferred message no longer counts in InFlight or against MaxInFlight, and the
//     partition's order is the order of delivery: messages after a deferred one are handled
//     (and may be acked) before it is.
//   - msg.Context() is done once the handler returns: deferred work needs a context of its
//     own.
//
// A handler that nacks msg after DeferAck nacks it at once (the handle then does nothing).
// ErrNotDelivered when msg did not come from a streamq Subscriber.
func DeferAck(msg *message.Message) (*DeferredAck, error) {
	dc, ok := msg.Context().Value(deferKey).(*deliveryCtx)
	if !ok || dc.w == nil {
		return nil, ErrNotDelivered
	}
	d := &DeferredAck{w: dc.w, e: dc.entry, msg: msg}
	dc.deferred.Store(d)
	return d, nil
}

// StreamID is the deferred message's stream id.
func (d *DeferredAck) StreamID() string { return d.e.ID }

// Ack acknowledges the deferred message: it is queued with the partition's other acks and
// flushed within Acks.FlushInterval. ErrLeaseLost when the partition was handed over: its
// next owner delivers the message again.
func (d *DeferredAck) Ack() error { return d.settle(acked) }

// Nack gives the deferred message back: it is retried after the retry policy's backoff or
// dead-lettered, as a nack by its handler would be (LastErrorMetadata and DeadLetter on the
// message count). ErrLeaseLost when the partition was handed over.
func (d *DeferredAck) Nack() error { return d.settle(nacked) }

func (d *DeferredAck) settle(out outcome) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.settled {
		return nil
	}
	if err := d.w.settleDeferred(d.e, d.msg, out); err != nil {
		return err
	}
	d.settled = true
	return nil
}

// settleDeferred carries out the decision on a deferred entry; ErrLeaseLost when the worker
// stopped. A decision to deliver the entry again (a failed step, a nack on a DLQ) releases
// it, so the pending scan delivers it again after Reclaim.Idle.
func (w *worker) settleDeferred(e position.Entry, m *message.Message, out outcome) error {
	if w.isStopping() {
		return fmt.Errorf("deferred ack of %s on partition %d: the partition was handed over: %w", e.ID, w.d.keys.Index, ErrLeaseLost)
	}
	if done, _ := w.conclude(e, m, out, nil); !done {
		w.pos.Forget([]stream.Acked{{ID: e.ID}})
	}
	return nil
}
