package consume

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/position"
)

// deliveryCtx is a delivered message's context: done when the worker's message context is
// (the subscription closed, the partition was lost) and once the delivery is settled
// (acked, nacked or stopped), and it carries the delivery for the FromCtx getters.
//
// A context.WithCancel child per message would cost an allocation and a registration in
// the parent on every delivery, while few handlers ever wait on Done. Here that child is
// made only when something needs it: the first Done (context.AfterFunc and WithCancel below
// this context call it too), or a lookup of another key after settling, so that
// context.Cause sees the cancellation. Until then settling only sets a flag.
type deliveryCtx struct {
	parent context.Context
	d      Delivery
	w      *worker        // the partition that delivered it, for Defer
	entry  position.Entry // the entry delivered, for Defer
	// deferred is set when the handler called Defer: its ack does not settle the entry.
	deferred atomic.Pointer[Deferred]

	mu      sync.Mutex
	settled bool
	child   context.Context // nil until needed
	cancel  context.CancelFunc
}

var _ context.Context = (*deliveryCtx)(nil)

// Deadline is the parent's: settling cancels, it sets no deadline.
func (c *deliveryCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done is closed once the delivery is settled or the parent is done.
func (c *deliveryCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.childLocked().Done()
}

// Err is context.Canceled once the delivery is settled, else the parent's.
func (c *deliveryCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.child != nil {
		return c.child.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.settled {
		return context.Canceled
	}
	return nil
}

// Value returns the delivery for deliveryKey, the context itself for ctxKey, and asks the
// parent (or the child, once there is one) for any other key.
func (c *deliveryCtx) Value(key any) any {
	switch key {
	case any(deliveryKey):
		return &c.d
	case any(ctxKey):
		return c
	}
	c.mu.Lock()
	var child context.Context
	if c.child != nil || c.settled {
		child = c.childLocked()
	}
	c.mu.Unlock()
	if child != nil {
		return child.Value(key)
	}
	return c.parent.Value(key)
}

// settle ends the context: the delivery was acked, nacked or stopped.
func (c *deliveryCtx) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled = true
	if c.cancel != nil {
		c.cancel()
	}
}

// childLocked makes the cancelable child on first use, canceled at once when the delivery
// was already settled; c.mu is held.
func (c *deliveryCtx) childLocked() context.Context {
	if c.child == nil {
		c.child, c.cancel = context.WithCancel(c.parent)
		if c.settled {
			c.cancel()
		}
	}
	return c.child
}

// Delivery is what a delivered message's context tells its handler (the API's FromCtx
// getters read it) and a tracer.
type Delivery struct {
	Topic           string // as subscribed (a DLQ's name on a DLQ view)
	Partition       int
	StreamID        string
	Count           int64 // deliveries of the entry to the group, this one included
	Group, Consumer string
	Retries         int    // of the message before this entry
	OriginalID      string // the message's first entry (a dead letter's record's on a DLQ)
	LastError       string
	Letter          *dlq.Record // the dead letter's record on a DLQ view, else nil
}

type contextKey int

const (
	deliveryKey contextKey = iota // the *Delivery of a delivered message
	ctxKey                        // the *deliveryCtx itself, for Defer
)

// DeliveryOf returns the delivery of a message whose context is ctx; false for a context a
// Consumer did not make.
func DeliveryOf(ctx context.Context) (*Delivery, bool) {
	d, ok := ctx.Value(deliveryKey).(*Delivery)
	return d, ok
}
