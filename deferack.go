package streamq

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/consume"
)

// ErrNotDelivered is returned by DeferAck for a message a streamq Subscriber did not
// deliver (or whose context is not the delivery's).
var ErrNotDelivered = errors.New("not a message delivered by a streamq Subscriber")

// DeferredAck is a delivered message whose acknowledgement its handler put off (DeferAck):
// the partition moved on, and the entry stays pending for this member until Ack or Nack.
// Its methods are safe for concurrent use; the first Ack or Nack settles it, later calls
// return nil.
type DeferredAck struct {
	h *consume.Deferred
}

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
	h, ok := consume.Defer(msg.Context(), msg)
	if !ok {
		return nil, ErrNotDelivered
	}
	return &DeferredAck{h: h}, nil
}

// StreamID is the deferred message's stream id.
func (d *DeferredAck) StreamID() string { return d.h.StreamID() }

// Ack acknowledges the deferred message: it is queued with the partition's other acks and
// flushed within Acks.FlushInterval. ErrLeaseLost when the partition was handed over: its
// next owner delivers the message again.
func (d *DeferredAck) Ack() error { return d.h.Ack() }

// Nack gives the deferred message back: it is retried after the retry policy's backoff or
// dead-lettered, as a nack by its handler would be (LastErrorMetadata and DeadLetter on the
// message count). ErrLeaseLost when the partition was handed over.
func (d *DeferredAck) Nack() error { return d.h.Nack() }
