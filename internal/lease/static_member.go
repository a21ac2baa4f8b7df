package lease

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
)

// ErrNameInUse is returned by StaticMember.Claim when another live process holds the name: it
// refreshed its presence while this one waited for it to be gone.
var ErrNameInUse = errors.New("consumer name in use by another live process")

// StaticMember is what static membership (StaticMemberGrace) adds to a subscription: the
// process's hold on the member's name in the group (Instance), its presence and the keeper
// that renews it, and whether a graceful shutdown keeps the leases.
//
// Names: Subscribe claims the name before anything starts (Claim). Nobody holds it, its
// holder left (a Close) or was silent for the presence window W (a crash): the name is this
// process's, and its rebalancer, whose first round runs as soon as the subscription starts,
// takes over the leases earlier processes of the name still hold (Leases.Reclaim: their
// tokens are fenced out). A holder that may still be there is waited for, at most W after
// its last refresh; one that refreshes meanwhile is a live process with the same name, and
// Claim returns ErrNameInUse.
//
// Presence: the presence keeper refreshes the record every W/3, apart from the rebalance
// loop. Each refresh vouches for the process for W: the record says until when in server
// time (W from the server's clock when the refresh ran), and the process's presence term runs
// W from the refresh's send time, so it ends first. Every partition's term ends with the
// presence: a process that could not refresh for W (frozen, cut off) stops delivering before
// a successor may take its name and leases. A restart after a crash waits for the dead
// process's last refresh to be W old: at most W, less the time the dead process was already
// silent.
//
// Leases: a static member's leases live StaticMemberGrace in Redis (the process's own term
// stays LeaseTTL), so a crashed member's partitions wait for it that long. A graceful
// shutdown renews them for the grace instead of releasing them (except those handed over to
// another member) and leaves the group: the others wait for the leases, the next process
// takes them back at once.
type StaticMember struct {
	inst     *member.Instance
	presence *Term
	keeper   *presenceKeeper
	clock    clock.Clock
	log      watermill.LoggerAdapter
	parking  atomic.Bool // a graceful shutdown: the partitions keep their leases for the grace
}

// StaticDeps is what a static member is built from: its name and process id in group on
// view, the member config and the longest read block (which the presence window must
// outlast), and what stops the subscription as a crash would (superseded: another process
// took the name over).
type StaticDeps struct {
	Client     redis.UniversalClient
	View       keys.View
	Group      string
	Name, ID   string
	Config     Config
	Block      time.Duration
	Clock      clock.Clock
	Log        watermill.LoggerAdapter
	Superseded func()
}

// minPresenceWindow is the shortest presence window: a refresh every 100ms at least leaves
// room for a pause of the process or the network before the presence lapses.
const minPresenceWindow = 300 * time.Millisecond

// PresenceWindow is the presence window W of a static member whose reads block for block:
// three quarters of RebalanceInterval, so a restarted process holds its partitions again
// within one RebalanceInterval of its start (it waits at most W, then its first rebalance
// round takes them); W spans three refreshes, so one failed refresh does not end the
// presence. At least three BlockTimes (a read is sent only while the presence lasts one more
// BlockTime, and while refreshes succeed at least two thirds of W are left), at least
// minPresenceWindow, never longer than LeaseTTL.
func PresenceWindow(cfg Config, block time.Duration) time.Duration {
	return min(max(cfg.RebalanceInterval*3/4, 3*block, minPresenceWindow), cfg.LeaseTTL)
}

// NewStaticMember returns the static part of a subscription whose context is parent; nil
// when static membership is off (StaticMemberGrace 0). A nil *StaticMember does nothing.
func NewStaticMember(parent context.Context, d StaticDeps) *StaticMember {
	if d.Config.StaticMemberGrace <= 0 {
		return nil
	}
	w := PresenceWindow(d.Config, d.Block)
	st := &StaticMember{
		inst:     member.NewInstance(d.Client, d.View.Instances(d.Group), d.Name, d.ID, w, 10*d.Config.LeaseTTL),
		presence: NewTerm(d.Clock, w, time.Time{}), // none until the name is claimed
		clock:    d.Clock, log: d.Log,
	}
	st.keeper = newPresenceKeeper(parent, presenceDeps{
		rdb: d.Client, inst: st.inst, term: st.presence, period: w / 3,
		clock: d.Clock, log: d.Log, superseded: d.Superseded,
	})
	return st
}

// Instance is the process's hold on the name, for the membership heartbeat.
func (st *StaticMember) Instance() *member.Instance {
	if st == nil {
		return nil
	}
	return st.inst
}

// Start starts renewing the presence (after the name was claimed).
func (st *StaticMember) Start() {
	if st != nil {
		st.keeper.start()
	}
}

// Stop stops renewing the presence: after it returns, no refresh touches the record.
func (st *StaticMember) Stop() {
	if st != nil {
		st.keeper.stop()
	}
}

// Presence is the term every partition's term ends with; nil for a member that is not static.
func (st *StaticMember) Presence() *Term {
	if st == nil {
		return nil
	}
	return st.presence
}

// Claim takes the member's name for this process before the subscription starts: at once
// when nobody holds it, its holder left or its holder was silent for the presence window;
// after waiting out a holder that may still be there (a crash a moment ago: at most one
// presence window; a Close under way); never when the holder refreshes its presence
// meanwhile: ErrNameInUse. wait waits between tries (ctx's or the Subscriber's end stops it).
func (st *StaticMember) Claim(ctx context.Context, wait func(time.Duration) error) error {
	if st == nil {
		return nil
	}
	var first member.Claim
	for {
		sent := st.clock.Now()
		c, err := st.inst.Claim(ctx)
		switch {
		case err != nil:
			return err
		case c.Taken:
			st.presence.Renewed(sent)
			st.logClaim(c)
			return nil
		case first.State == "":
			first = c
			st.log.Info("The ConsumerName was in use a moment ago: waiting for its process to be gone",
				watermill.LogFields{"holder_state": c.State, "wait": c.Left.String()})
		case c.State == "live" && (c.Holder != first.Holder || c.Until > first.Until):
			return ErrNameInUse
		}
		if err := wait(c.Left + time.Millisecond); err != nil {
			return err
		}
	}
}

func (st *StaticMember) logClaim(c member.Claim) {
	if c.How == "gone" {
		st.log.Info("Took the ConsumerName over from a process silent for the presence window (presumed crashed): "+
			"taking back its partitions", nil)
		return
	}
	st.log.Debug("Claimed the ConsumerName", watermill.LogFields{"how": c.How})
}

// Park starts a graceful shutdown that keeps the leases: it records that the process is
// closing (a successor waits for it meanwhile, up to hold) and has the partitions keep their
// leases, renewed for the grace, instead of releasing them. superseded reports that another
// process took the name over: this one must shut down as if crashed (its leases and
// membership are the successor's).
func (st *StaticMember) Park(ctx context.Context, hold time.Duration) (superseded bool) {
	mine, err := st.inst.Closing(ctx, hold+st.inst.Window())
	switch {
	case err != nil:
		st.log.Error("Could not record the Close of this static member: a successor may take its partitions before it flushed its acks", err, nil)
	case !mine:
		return true
	}
	st.parking.Store(true)
	return false
}

// Parking reports a graceful shutdown under way that keeps the leases (Park).
func (st *StaticMember) Parking() bool { return st != nil && st.parking.Load() }
