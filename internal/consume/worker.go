package consume

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keyorder"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/run"
)

// deliveryConfig is the groups a partition's delivery loop follows.
type deliveryConfig struct {
	delivery     Dispatch                                       // CloseTimeout; OrderByKey and PartitionKey
	reclaim      Reclaim                                        // the pending scan
	payloadRetry time.Duration                                  // wait between tries to load an offloaded payload (Retry.MoverInterval)
	unmarshal    func(map[string]any) (*message.Message, error) // nil: DefaultMarshaler's format
	maxHeld      int                                            // messages that may wait behind their keys before the loop waits too
}

// outlet is where a subscription's partitions deliver: the output channel, the
// subscription-wide in-flight cap and gauge, and the Subscribe context message contexts
// derive from.
type outlet struct {
	out       chan<- *message.Message
	inFlight  chan struct{} // MaxInFlight semaphore, nil when unbounded
	inFlightN *atomic.Int64 // unacked messages, for the InFlight gauge
	count     Counters      // the subscription's, for the gauge
	ctx       context.Context
}

// workerHooks are what a worker reports to its subscription when it ends: the fetcher it
// leaves, the lease it releases on a graceful stop, and that it is gone.
type workerHooks struct {
	fetch   *fetcher
	release func(context.Context) error
	exited  func()
}

// worker is one owned partition: its read position and the components that serve it (the
// claimer, the acker, the settler and, on a topic, the mover and the housekeeper), with
// the delivery loop that hands its entries to the output in stream order (up to
// MaxInFlightPerPartition at once). Start order: acker, mover, housekeeper, then the
// delivery loop (which claims what is pending, then joins the fetcher). Stop order, in
// shutdown: leave the fetcher, drain in-flight messages, stop the mover, housekeeper and
// acker, then (when graceful) flush the acks and release the lease.
type worker struct {
	d           partDeps
	fence       fence.Fence // the partition's lease and this member's token
	cfg         deliveryConfig
	outlet      outlet
	gates       run.Gates // delivery waits while one is closed (Pause, a paused group, an outage)
	outage      *retry.Outage
	outageStore outageStore
	tracer      Hooks // nil: no tracing
	hooks       workerHooks
	pos         *position.Position
	feed        *feed
	claims      *claimer
	acks        *acker
	settle      *settler
	mover       *mover       // nil when the view has no background work
	keeper      *housekeeper // likewise

	stop       chan struct{} // closed when the worker must stop delivering
	draining   atomic.Bool   // a graceful stop under way: the lease is renewed until released
	stopOnce   sync.Once
	shutOnce   sync.Once
	runDone    chan struct{}
	cancelCtx  context.CancelFunc // cancels d.ctx
	msgCtx     context.Context    // parent of message contexts
	cancelMsgs context.CancelFunc
	sem        chan struct{}
	handlers   sync.WaitGroup
	order      *keyorder.Order[position.Entry] // per-key order; nil without OrderByKey
}

// begin stops delivery; true when this call did it.
func (w *worker) beginStop() bool {
	did := false
	w.stopOnce.Do(func() {
		close(w.stop)
		w.cancelCtx()
		did = true
	})
	return did
}

// loseDrain ends a graceful stop's drain because the lease was lost: the renewer lets the
// lease go and the in-flight messages are cancelled. true when this call ended it.
func (w *worker) loseDrain() bool {
	if !w.draining.CompareAndSwap(true, false) {
		return false
	}
	w.cancelMsgs()
	return true
}

func (w *worker) isStopping() bool { return w.d.stopping() }

// keepsLease reports whether the renewer keeps w's lease alive: while it delivers, and
// while a graceful stop drains its in-flight messages and flushes their acks (a handler
// slower than LeaseTTL must not lose its ack to an expired lease), until the release.
func (w *worker) keepsLease() bool { return !w.isStopping() || w.draining.Load() }

// start runs the worker's components and its delivery loop.
func (w *worker) start() {
	w.acks.start()
	if w.mover != nil {
		w.mover.start()
	}
	if w.keeper != nil {
		w.keeper.start()
	}
	go w.run()
}

// shutdown stops the worker. Graceful: wait up to CloseTimeout for in-flight messages,
// flush acks and release the lease. Otherwise (lease lost, crash): cancel in-flight messages
// and keep everything pending for the next owner.
func (w *worker) shutdown(graceful bool) {
	w.beginStop()
	w.shutOnce.Do(func() { w.doShutdown(graceful) })
}

func (w *worker) doShutdown(graceful bool) {
	w.draining.Store(graceful)
	w.hooks.fetch.remove(w.feed)
	if !graceful {
		w.cancelMsgs()
	}
	w.drainHandlers()
	if w.mover != nil {
		w.mover.stop()
	}
	if w.keeper != nil {
		w.keeper.stop()
	}
	w.acks.stop()
	if graceful {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(w.outlet.ctx), w.cfg.delivery.CloseTimeout)
		w.acks.flush(ctx)
		if err := w.hooks.release(ctx); err != nil {
			w.d.log.Error("Could not release lease", err, nil)
		}
		w.draining.Store(false)
		cancel()
	}
	w.d.log.Debug("Partition released", watermill.LogFields{"graceful": graceful})
	w.hooks.exited()
}

// drainHandlers waits up to CloseTimeout for the delivery loop and in-flight messages (an
// ordered partition handles its message on the loop), then cancels them.
func (w *worker) drainHandlers() {
	done := make(chan struct{})
	go func() {
		<-w.runDone
		w.handlers.Wait()
		close(done)
	}()
	t := w.d.clock.NewTimer(w.cfg.delivery.CloseTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
		w.d.log.Info("In-flight messages not acked within CloseTimeout; they stay pending", nil)
	}
	w.cancelMsgs()
	<-done
}
