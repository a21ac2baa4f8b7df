package streamq

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// errLeaseExpired is why a partition stops when LeaseTTL passed since the last successful
// acquisition or renewal was sent, or a static member's presence lapsed (no presence
// refresh confirmed for its presence window).
var errLeaseExpired = errors.New("lease not renewed within LeaseTTL, or a static member's presence lapsed")

// errLeaseTaken is why a partition stops when its lease is found owned by another member.
var errLeaseTaken = errors.New("lease owned by another member")

// heldLease is one lease the renewer keeps alive: its fence, its term, whom to tell when
// it is renewed (the fetcher skips a partition whose lease is about to lapse) and when it
// is lost.
type heldLease struct {
	fence   fence.Fence
	term    *lease.Term
	renewed func()
	lost    func(error)
}

// renewer renews the leases of the running partitions every RenewInterval, in one pipeline.
// A lease found owned by someone else, or not renewed for a whole LeaseTTL, is lost: its
// partition stops at once.
type renewer struct {
	rdb      redis.UniversalClient
	leases   *lease.Leases
	held     func() []heldLease
	interval time.Duration
	clock    clock.Clock
	run      *run.Runner
	ctx      context.Context // cancelled on stop
	cancel   context.CancelFunc
}

func newRenewer(parent context.Context, rdb redis.UniversalClient, leases *lease.Leases, held func() []heldLease,
	interval time.Duration, c clock.Clock) *renewer {
	r := &renewer{rdb: rdb, leases: leases, held: held, interval: interval, clock: c, run: run.NewRunner()}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(parent))
	return r
}

func (r *renewer) start() { r.run.Start(r.loop) }

func (r *renewer) stop() {
	r.cancel()
	r.run.Stop()
}

func (r *renewer) loop() {
	for r.run.Sleep(r.clock, r.interval) {
		r.renewAll(r.ctx)
	}
}

// renewAll renews every held lease in one pipeline and reports each outcome to its term.
func (r *renewer) renewAll(ctx context.Context) {
	held := r.held()
	req := make([]lease.Held, len(held))
	for i, h := range held {
		req[i] = lease.Held{Key: h.fence.Key, Token: h.fence.Token}
	}
	sent := r.clock.Now() // a renewed lease lives at least LeaseTTL from here
	for i, res := range r.leases.RenewAll(ctx, req) {
		h := held[i]
		switch {
		case res.Err == nil && res.Owned:
			h.term.Renewed(sent)
			h.renewed()
		case res.Err == nil:
			h.lost(errLeaseTaken)
		default:
			server.ReloadOnConnError(ctx, r.rdb, res.Err)
			if h.term.Expired() {
				h.lost(res.Err)
			}
		}
	}
}
