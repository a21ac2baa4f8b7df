package consume

import (
	"context"
	"fmt"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Deferred is a delivered message whose acknowledgement its handler put off: the partition
// moved on, and the entry stays pending for this member until Ack or Nack. Safe for
// concurrent use; the first Ack or Nack settles it, later calls return nil.
type Deferred struct {
	w   *worker
	e   position.Entry
	msg *message.Message

	mu      sync.Mutex
	settled bool
}

// Defer puts off the acknowledgement of msg, delivered with context ctx: once msg is acked
// its partition delivers its next message, and msg's entry stays pending until the returned
// handle settles it. false when ctx is not a delivery's.
func Defer(ctx context.Context, msg *message.Message) (*Deferred, bool) {
	dc, ok := ctx.Value(ctxKey).(*deliveryCtx)
	if !ok || dc.w == nil {
		return nil, false
	}
	d := &Deferred{w: dc.w, e: dc.entry, msg: msg}
	dc.deferred.Store(d)
	return d, true
}

// StreamID is the deferred message's stream id.
func (d *Deferred) StreamID() string { return d.e.ID }

// Ack queues the entry's ack with the partition's other acks; fence.ErrLeaseLost when the
// partition was handed over.
func (d *Deferred) Ack() error { return d.settle(retry.Acked) }

// Nack retries or dead-letters the entry as a nack in its handler would; fence.ErrLeaseLost
// when the partition was handed over.
func (d *Deferred) Nack() error { return d.settle(retry.Nacked) }

func (d *Deferred) settle(out retry.Outcome) error {
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

// settleDeferred carries out the decision on a deferred entry; fence.ErrLeaseLost when the
// worker stopped. A decision to deliver the entry again (a failed step, a nack on a DLQ)
// releases it, so the pending scan delivers it again after Reclaim.Idle.
func (w *worker) settleDeferred(e position.Entry, m *message.Message, out retry.Outcome) error {
	if w.isStopping() {
		return fmt.Errorf("deferred ack of %s on partition %d: the partition was handed over: %w", e.ID, w.d.keys.Index, fence.ErrLeaseLost)
	}
	if done, _ := w.conclude(e, m, out, nil); !done {
		w.pos.Forget([]stream.Acked{{ID: e.ID}})
	}
	return nil
}
