package lease

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// ErrExpired is why a partition stops when LeaseTTL passed since the last successful
// acquisition or renewal was sent, or a static member's presence lapsed (no presence
// refresh confirmed for its presence window).
var ErrExpired = errors.New("lease not renewed within LeaseTTL, or a static member's presence lapsed")

// ErrTaken is why a partition stops when its lease is found owned by another member.
var ErrTaken = errors.New("lease owned by another member")

// HeldLease is one lease the renewer keeps alive: its fence, its term, whom to tell when it
// is renewed (the fetcher skips a partition whose lease is about to lapse) and when it is
// lost.
type HeldLease struct {
	Fence   fence.Fence
	Term    *Term
	Renewed func()
	Lost    func(error)
}

// RenewerDeps is what a renewer is built from: the leases to renew, read anew each round.
type RenewerDeps struct {
	Client   redis.UniversalClient
	Leases   *Leases
	Held     func() []HeldLease
	Interval time.Duration
	Clock    clock.Clock
}

// Renewer renews the leases of the running partitions every RenewInterval, in one pipeline.
// A lease found owned by someone else, or not renewed for a whole LeaseTTL, is lost: its
// partition stops at once.
type Renewer struct {
	d      RenewerDeps
	run    *run.Runner
	ctx    context.Context // cancelled on stop
	cancel context.CancelFunc
}

// NewRenewer returns a renewer whose renewals run apart from parent's cancellation.
func NewRenewer(parent context.Context, d RenewerDeps) *Renewer {
	r := &Renewer{d: d, run: run.NewRunner()}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(parent))
	return r
}

// Start renews every Interval.
func (r *Renewer) Start() { r.run.Start(r.loop) }

// Stop ends the renewals; one under way is cancelled.
func (r *Renewer) Stop() {
	r.cancel()
	r.run.Stop()
}

// Cancel drops a renewer never started.
func (r *Renewer) Cancel() { r.cancel() }

func (r *Renewer) loop() {
	for r.run.Sleep(r.d.Clock, r.d.Interval) {
		r.renewAll(r.ctx)
	}
}

// renewAll renews every held lease in one pipeline and reports each outcome to its term.
func (r *Renewer) renewAll(ctx context.Context) {
	held := r.d.Held()
	req := make([]Held, len(held))
	for i, h := range held {
		req[i] = Held{Key: h.Fence.Key, Token: h.Fence.Token}
	}
	sent := r.d.Clock.Now() // a renewed lease lives at least LeaseTTL from here
	for i, res := range r.d.Leases.RenewAll(ctx, req) {
		h := held[i]
		switch {
		case res.Err == nil && res.Owned:
			h.Term.Renewed(sent)
			h.Renewed()
		case res.Err == nil:
			h.Lost(ErrTaken)
		default:
			server.ReloadOnConnError(ctx, r.d.Client, res.Err)
			if h.Term.Expired() {
				h.Lost(res.Err)
			}
		}
	}
}
