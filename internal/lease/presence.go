package lease

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// presenceDeps is what a static member's presence keeper is built from.
type presenceDeps struct {
	rdb        redis.UniversalClient
	inst       *member.Instance // the process's hold on the member's name
	term       *Term            // the presence term the refreshes renew
	period     time.Duration    // between two refreshes: a third of the presence window
	clock      clock.Clock
	log        watermill.LoggerAdapter
	superseded func() // another process holds the name: stop as a crash would
}

// presenceKeeper renews a static member's presence every period, apart from the rebalance
// loop, so the presence window, and with it the wait of a restarted process for a crashed
// one, can be short (see StaticMember). Each refresh that Redis confirms renews the term from
// the refresh's send time. A refresh that finds another process holding the name stops the
// subscription the way a crash would, and the keeper with it.
type presenceKeeper struct {
	d      presenceDeps
	run    *run.Runner
	ctx    context.Context // cancelled on stop
	cancel context.CancelFunc
	lapsed atomic.Bool // the term ran out while refreshes failed: logged once until one succeeds
}

func newPresenceKeeper(parent context.Context, d presenceDeps) *presenceKeeper {
	p := &presenceKeeper{d: d, run: run.NewRunner()}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(parent))
	return p
}

func (p *presenceKeeper) start() { p.run.Start(p.loop) }

// stop ends the loop and waits for a refresh under way: none is sent after stop returns.
func (p *presenceKeeper) stop() {
	p.cancel()
	p.run.Stop()
}

// loop refreshes one period after the previous refresh was sent, until stop or until the
// name is found taken over.
func (p *presenceKeeper) loop() {
	wait := p.d.period
	for p.run.Sleep(p.d.clock, wait) {
		sent := p.d.clock.Now()
		if !p.refresh(p.ctx, sent) {
			return
		}
		wait = max(p.d.period-clock.Since(p.d.clock, sent), 0)
	}
}

// refresh renews the presence once, its request sent at sent; false means another process
// holds the name. A refresh gets one presence window to answer: an answer later than that
// would renew nothing.
func (p *presenceKeeper) refresh(ctx context.Context, sent time.Time) bool {
	rctx, cancel := context.WithTimeout(ctx, p.d.inst.Window())
	defer cancel()
	renewed, err := p.d.inst.Refresh(rctx)
	switch {
	case err == nil:
		if renewed {
			p.d.term.Renewed(sent)
			p.lapsed.Store(false)
		}
	case errors.Is(err, member.ErrSuperseded):
		p.d.log.Error("Another process took over this ConsumerName (it found this one silent for the presence window, "+
			"or it runs with the same name): the subscription stops", err, nil)
		p.d.superseded()
		return false
	default:
		server.ReloadOnConnError(ctx, p.d.rdb, err)
		if p.d.term.Expired() && !p.lapsed.Swap(true) {
			p.d.log.Error("Could not renew the presence of this static member for its presence window: "+
				"its partitions stop until Redis answers again", err, watermill.LogFields{"window": p.d.inst.Window().String()})
		}
	}
	return true
}
