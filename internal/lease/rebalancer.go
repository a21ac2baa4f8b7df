package lease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// Partitions is what the rebalancer changes: the partitions this member runs.
type Partitions interface {
	Has(p int) bool
	Take(p int, token string, sent time.Time) // start delivering p, leased by a request sent then
	HandOver(keep []int)                      // gracefully stop every partition not in keep
	Count() int
	HighestAcked(p int) string // "" when not owned or nothing acked
}

// Gauges are the partition gauges of one subscription: how many partitions it may lease
// (after its filter), how many it holds, and its cap (0: none).
type Gauges interface {
	EligiblePartitions(n int)
	LeasedPartitions(n int)
	MaxLeasedPartitions(n int)
}

// Config is how a member holds its partitions, already defaulted: the lease and heartbeat
// TTL, the renewal and rebalance intervals, how often the topic's metadata is re-read, where
// a new group starts, and a static member's grace (0: not static).
type Config struct {
	LeaseTTL                 time.Duration
	RenewInterval            time.Duration
	RebalanceInterval        time.Duration
	PartitionRefreshInterval time.Duration
	GroupStartID             string
	StaticMemberGrace        time.Duration
}

// RebalancerDeps is what a rebalancer is built from.
type RebalancerDeps struct {
	Client   redis.UniversalClient
	Registry *partition.Registry
	Leases   *Leases
	Members  *member.Membership
	View     keys.View
	Group    string
	Member   string
	Self     member.Member // this member's filter and cap, for the partition gauges
	Share    Share         // this subscription's part of its Subscriber's MaxLeasedPartitions
	Config   Config
	// DeclaresGroup: the group is declared on the topic and checked against the group's
	// tombstone; a DLQ consumer keeps its group name apart from the topic's groups.
	DeclaresGroup bool
	Clock         clock.Clock
	Log           watermill.LoggerAdapter
	Gauges        Gauges
	CreateGroups  func(ctx context.Context, from, to int) error
	Owned         Partitions
	StopAll       func()    // stop the subscription (forced delete, closed client)
	CrashAll      func()    // stop it as a crash would (a static member whose name was taken over)
	Presence      *Term     // a static member's presence (see StaticMember); nil for others
	Pause         *run.Gate // closed while an operator pauses the group (admin.PauseGroup)
	Paused        func()    // report a change of the pause to the metrics
}

// Rebalancer heartbeats the membership and moves partitions toward the assignment every
// RebalanceInterval, starting at once; it keeps the topic's metadata as last read and heals
// what disappeared in Redis (see heal.go).
type Rebalancer struct {
	d       RebalancerDeps
	run     *run.Runner
	ctx     context.Context // cancelled on stop
	cancel  context.CancelFunc
	healReq chan struct{} // cap 1: wakes the loop for a heal
	healDue atomic.Bool   // something is missing in Redis

	mu          sync.Mutex
	parts       int            // partitions joined: the topic's count once it exists, else 0
	meta        partition.Meta // the topic's metadata as last read
	metaReadAt  time.Time
	live        []string // the group's live members at the last heartbeat
	waitingOnce sync.Once
}

// NewRebalancer returns a rebalancer whose rounds run apart from parent's cancellation.
func NewRebalancer(parent context.Context, d RebalancerDeps) *Rebalancer {
	r := &Rebalancer{d: d, run: run.NewRunner(), healReq: make(chan struct{}, 1)}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(parent))
	return r
}

// Start runs the rounds, the first at once.
func (r *Rebalancer) Start() { r.run.Start(r.loop) }

// Stop ends the rounds and waits for the one under way, which is cancelled.
func (r *Rebalancer) Stop() {
	r.cancel()
	r.run.Stop()
}

// Cancel drops a rebalancer never started.
func (r *Rebalancer) Cancel() { r.cancel() }

func (r *Rebalancer) loop() {
	for {
		err := r.round(r.ctx)
		switch {
		case err == nil || r.ctx.Err() != nil || errors.Is(err, ErrForcedDelete) || errors.Is(err, member.ErrSuperseded):
		case server.IsClosed(err):
			// Closed under us: nothing can work any more, so stop rather than log for ever.
			r.d.Log.Error("The Redis client was closed under the subscription: it stops (close the client after the Subscriber)", err, nil)
			r.d.StopAll()
			return
		default:
			server.ReloadOnConnError(r.ctx, r.d.Client, err)
			r.d.Log.Error("Rebalance failed, retrying", err, nil)
		}
		if !r.waitOrHeal() {
			return
		}
	}
}

// waitOrHeal blocks for the interval, until a heal is requested, or until stop; false
// means stop.
func (r *Rebalancer) waitOrHeal() bool {
	t := r.d.Clock.NewTimer(r.d.Config.RebalanceInterval)
	defer t.Stop()
	select {
	case <-t.C():
	case <-r.healReq:
	case <-r.run.Quit():
		return false
	}
	return true
}

// round is one rebalance: heal if asked, refresh the partition count, heartbeat, read lease
// owners, compute the assignment, hand over what is no longer ours and take what is.
func (r *Rebalancer) round(ctx context.Context) error {
	if err := r.refreshPause(ctx); err != nil { // before taking anything: a paused group stays paused
		return err
	}
	if r.healDue.Swap(false) {
		if err := r.heal(ctx); err != nil {
			r.healDue.Store(true) // again next round, after RebalanceInterval
			return err
		}
	}
	n, err := r.refreshPartitions(ctx)
	if err != nil {
		return err
	}
	r.d.Members.SetMaxLeased(r.d.Share.Capacity()) // what the other subscriptions leave
	live, err := r.heartbeat(ctx)
	if err != nil {
		return err
	}
	r.setLive(live)
	current, err := r.owners(ctx, n, live)
	if err != nil {
		return err
	}
	mine := Owned(Assign(n, live, current), r.d.Member)
	r.d.Owned.HandOver(mine)
	err = r.take(ctx, mine, current)
	r.reportPartitions(n)
	return err
}

// refreshPartitions re-reads the topic's metadata (every round while the topic does not exist
// yet, then every PartitionRefreshInterval) and creates the group on partitions it has not
// joined yet: all of them once a topic it waited for appears, the new ones of a grown topic.
func (r *Rebalancer) refreshPartitions(ctx context.Context) (int, error) {
	r.mu.Lock()
	old, readAt := r.parts, r.metaReadAt
	r.mu.Unlock()
	if old > 0 && clock.Since(r.d.Clock, readAt) < r.d.Config.PartitionRefreshInterval {
		return old, nil
	}
	m, err := r.d.Registry.Meta(ctx, r.d.View.Topic)
	if err != nil {
		return 0, err
	}
	if !m.Exists {
		r.topicMissing(old)
		return old, nil
	}
	if n := m.Count; n > old {
		if err := r.d.CreateGroups(ctx, old, n); err != nil {
			return 0, err
		}
		if old > 0 {
			r.d.Log.Info("Topic grew", watermill.LogFields{"partitions": n, "was": old})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = max(m.Count, old)
	r.meta, r.metaReadAt = m, r.d.Clock.Now()
	return r.parts, nil
}

// topicMissing handles a topic without metadata: not created yet (wait), or gone (heal).
func (r *Rebalancer) topicMissing(known int) {
	if known > 0 {
		r.RequestHeal() // the metadata vanished under us
		return
	}
	r.waitingOnce.Do(func() {
		r.d.Log.Info("Waiting for the topic to be created (by a publisher or admin.CreateTopic)", nil)
	})
}

// Partitions is the topic's partition count as last read (at least 1).
func (r *Rebalancer) Partitions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.parts, 1)
}

// LengthRetention is the length retention the topic's publishers recorded.
func (r *Rebalancer) LengthRetention() retention.Length {
	r.mu.Lock()
	defer r.mu.Unlock()
	return retention.Recorded(r.meta)
}

// owners reads the lease owner (member name) of every partition; "" when free or held by a
// member that is not live.
func (r *Rebalancer) owners(ctx context.Context, n int, live []member.Member) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = r.d.View.Lease(i, r.d.Group)
	}
	tokens, err := Owners(ctx, r.d.Client, keys)
	if err != nil {
		return nil, err
	}
	alive := make(map[string]bool, len(live))
	for _, m := range live {
		alive[m.Name] = true
	}
	out := make([]string, n)
	for i, t := range tokens {
		if name := member.TokenMember(t); alive[name] {
			out[i] = name
		}
	}
	return out, nil
}

// take acquires the assigned partitions that are free and starts them. It takes nothing
// while a heal is due: a partition lost during this round (its lease or stream deleted, a
// topic deleted by force) is first checked by the heal of the next round, which starts at
// once, so that a lease is never created again for what an operator deleted.
func (r *Rebalancer) take(ctx context.Context, mine []int, current []string) error {
	for _, p := range mine {
		if r.d.Owned.Has(p) || (current[p] != "" && current[p] != r.d.Member) {
			continue
		}
		if r.healDue.Load() {
			return nil
		}
		if !r.present() {
			return nil // a static member whose presence lapsed: the next heartbeat first
		}
		if !r.d.Share.Reserve() {
			return nil // the Subscriber's MaxLeasedPartitions are held
		}
		token := r.d.Leases.NextToken()
		sent := r.d.Clock.Now() // the lease lives at least LeaseTTL from here
		ok, err := r.acquire(ctx, p, token)
		if err != nil || !ok {
			r.d.Share.Release()
		}
		if err != nil {
			return err
		}
		if ok {
			r.d.Owned.Take(p, token, sent) // the worker gives the slot back when it exits
		}
	}
	return nil
}

// setLive records the live members of the group from the last heartbeat.
func (r *Rebalancer) setLive(live []member.Member) {
	names := make([]string, len(live))
	for i, m := range live {
		names[i] = m.Name
	}
	r.mu.Lock()
	r.live = names
	r.mu.Unlock()
}

// LiveMembers are the names of the group's live members at the last heartbeat.
func (r *Rebalancer) LiveMembers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live
}

// reportPartitions updates the partition gauges after a round.
func (r *Rebalancer) reportPartitions(n int) {
	eligible := 0
	for p := 0; p < n; p++ {
		if r.d.Self.Eligible(p) {
			eligible++
		}
	}
	r.d.Gauges.EligiblePartitions(eligible)
	r.d.Gauges.LeasedPartitions(r.d.Owned.Count())
	r.d.Gauges.MaxLeasedPartitions(r.d.Self.MaxLeased)
}

// refreshPause reads whether an operator paused the group (admin.PauseGroup) and opens or
// closes the subscription's group gate, logging each change once.
func (r *Rebalancer) refreshPause(ctx context.Context) error {
	p, err := r.d.Registry.Paused(ctx, r.d.View.Pause(r.d.Group))
	if err != nil {
		return err
	}
	if p.Paused && p.Since.IsZero() {
		p.Since = r.d.Clock.Now()
	}
	if !r.d.Pause.Set(p.Paused, p.Since) {
		return nil
	}
	if p.Paused {
		r.d.Log.Info("The group was paused by an operator: delivery stops until it is resumed", watermill.LogFields{"since": p.Since})
	} else {
		r.d.Log.Info("The group was resumed by an operator", nil)
	}
	r.d.Paused()
	return nil
}

// heartbeat heartbeats the membership. A static member whose name another process took over
// stops the subscription the way a crash would (no ack flush, no release, no leave: its
// leases and membership entry are the successor's now); its presence keeper, not the
// heartbeat, renews its presence.
func (r *Rebalancer) heartbeat(ctx context.Context) ([]member.Member, error) {
	live, err := r.d.Members.Heartbeat(ctx)
	if errors.Is(err, member.ErrSuperseded) {
		r.d.Log.Error("Another process took over this ConsumerName (it found this one silent for the presence window, "+
			"or it runs with the same name): the subscription stops", err, nil)
		r.d.CrashAll()
	}
	return live, err
}

// present reports whether the member may take partitions: a static member only while its
// presence lasts (else a successor may hold its name already).
func (r *Rebalancer) present() bool {
	return r.d.Presence == nil || !r.d.Presence.Expired()
}

// acquire takes partition p's lease with token; a static member also takes it over from an
// earlier process of its name.
func (r *Rebalancer) acquire(ctx context.Context, p int, token string) (bool, error) {
	key := r.d.View.Lease(p, r.d.Group)
	if r.d.Presence == nil {
		return r.d.Leases.Acquire(ctx, key, token)
	}
	held, took, err := r.d.Leases.Reclaim(ctx, key, token)
	if took {
		r.d.Log.Info("Took the partition back from an earlier process of this member", watermill.LogFields{"partition": p})
	}
	return held, err
}

// Leave takes the member out of the group's membership (a graceful end).
func (r *Rebalancer) Leave(ctx context.Context) error { return r.d.Members.Leave(ctx) }
