package streamq

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// partitionSet is what the rebalancer changes: the partitions this member runs.
type partitionSet interface {
	has(p int) bool
	take(p int, token string, sent time.Time) // start delivering p, leased by a request sent then
	handOver(keep []int)                      // gracefully stop every partition not in keep
	count() int
	highestAcked(p int) string // "" when not owned or nothing acked
}

// rebalanceDeps is what the rebalancer is built from.
type rebalanceDeps struct {
	rdb          redis.UniversalClient
	reg          *partition.Registry
	leases       *lease.Leases
	members      *lease.Membership
	view         view
	group        string
	member       string
	self         lease.Member // this member's filter and the Subscriber's cap, for the partition gauges
	share        leaseShare   // this subscription's part of the Subscriber's MaxLeasedPartitions
	cfg          MembershipConfig
	clock        clock.Clock
	log          watermill.LoggerAdapter
	metrics      MetricsCollector
	labels       Labels // the subscription's
	createGroups func(ctx context.Context, from, to int) error
	owned        partitionSet
	stopAll      func()      // stop the subscription (forced delete, closed client)
	crashAll     func()      // stop it as a crash would (a static member whose name was taken over)
	presence     *lease.Term // a static member's presence (see static.go); nil for others
	pause        *run.Gate   // closed while an operator pauses the group (admin.PauseGroup)
	paused       func()      // report a change of the pause to the metrics
}

// rebalancer heartbeats the membership and moves partitions toward the assignment every
// RebalanceInterval, starting at once; it keeps the topic's metadata as last read and heals
// what disappeared in Redis (see heal.go).
type rebalancer struct {
	d       rebalanceDeps
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

func newRebalancer(parent context.Context, d rebalanceDeps) *rebalancer {
	r := &rebalancer{d: d, run: run.NewRunner(), healReq: make(chan struct{}, 1)}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(parent))
	return r
}

func (r *rebalancer) start() { r.run.Start(r.loop) }

func (r *rebalancer) stop() {
	r.cancel()
	r.run.Stop()
}

func (r *rebalancer) loop() {
	for {
		err := r.round(r.ctx)
		switch {
		case err == nil || r.ctx.Err() != nil || errors.Is(err, errForcedDelete) || errors.Is(err, lease.ErrSuperseded):
		case server.IsClosed(err):
			// Closed under us: nothing can work any more, so stop rather than log for ever.
			r.d.log.Error("The Redis client was closed under the subscription: it stops (close the client after the Subscriber)", err, nil)
			r.d.stopAll()
			return
		default:
			server.ReloadOnConnError(r.ctx, r.d.rdb, err)
			r.d.log.Error("Rebalance failed, retrying", err, nil)
		}
		if !r.waitOrHeal() {
			return
		}
	}
}

// waitOrHeal blocks for the interval, until a heal is requested, or until stop; false
// means stop.
func (r *rebalancer) waitOrHeal() bool {
	t := r.d.clock.NewTimer(r.d.cfg.RebalanceInterval)
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
func (r *rebalancer) round(ctx context.Context) error {
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
	r.d.members.SetMaxLeased(r.d.share.capacity()) // what the other subscriptions leave
	live, err := r.heartbeat(ctx)
	if err != nil {
		return err
	}
	r.setLive(live)
	current, err := r.owners(ctx, n, live)
	if err != nil {
		return err
	}
	mine := lease.Owned(lease.Assign(n, live, current), r.d.member)
	r.d.owned.handOver(mine)
	err = r.take(ctx, mine, current)
	r.reportPartitions(n)
	return err
}

// refreshPartitions re-reads the topic's metadata (every round while the topic does not exist
// yet, then every PartitionRefreshInterval) and creates the group on partitions it has not
// joined yet: all of them once a topic it waited for appears, the new ones of a grown topic.
func (r *rebalancer) refreshPartitions(ctx context.Context) (int, error) {
	r.mu.Lock()
	old, readAt := r.parts, r.metaReadAt
	r.mu.Unlock()
	if old > 0 && clock.Since(r.d.clock, readAt) < r.d.cfg.PartitionRefreshInterval {
		return old, nil
	}
	m, err := r.d.reg.Meta(ctx, r.d.view.topic)
	if err != nil {
		return 0, err
	}
	if !m.Exists {
		r.topicMissing(old)
		return old, nil
	}
	if n := m.Count; n > old {
		if err := r.d.createGroups(ctx, old, n); err != nil {
			return 0, err
		}
		if old > 0 {
			r.d.log.Info("Topic grew", watermill.LogFields{"partitions": n, "was": old})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = max(m.Count, old)
	r.meta, r.metaReadAt = m, r.d.clock.Now()
	return r.parts, nil
}

// topicMissing handles a topic without metadata: not created yet (wait), or gone (heal).
func (r *rebalancer) topicMissing(known int) {
	if known > 0 {
		r.requestHeal() // the metadata vanished under us
		return
	}
	r.waitingOnce.Do(func() {
		r.d.log.Info("Waiting for the topic to be created (by a publisher or admin.CreateTopic)", nil)
	})
}

// partitions is the topic's partition count as last read (at least 1).
func (r *rebalancer) partitions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.parts, 1)
}

// lengthRetention is the length retention the topic's publishers recorded.
func (r *rebalancer) lengthRetention() retention.Length {
	r.mu.Lock()
	defer r.mu.Unlock()
	return retention.Recorded(r.meta)
}

// owners reads the lease owner (member name) of every partition; "" when free or held by a
// member that is not live.
func (r *rebalancer) owners(ctx context.Context, n int, live []lease.Member) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = r.d.view.lease(i, r.d.group)
	}
	tokens, err := lease.Owners(ctx, r.d.rdb, keys)
	if err != nil {
		return nil, err
	}
	alive := make(map[string]bool, len(live))
	for _, m := range live {
		alive[m.Name] = true
	}
	out := make([]string, n)
	for i, t := range tokens {
		if name := lease.TokenMember(t); alive[name] {
			out[i] = name
		}
	}
	return out, nil
}

// take acquires the assigned partitions that are free and starts them.
func (r *rebalancer) take(ctx context.Context, mine []int, current []string) error {
	for _, p := range mine {
		if r.d.owned.has(p) || (current[p] != "" && current[p] != r.d.member) {
			continue
		}
		if !r.present() {
			return nil // a static member whose presence lapsed: the next heartbeat first
		}
		if !r.d.share.reserve() {
			return nil // the Subscriber's MaxLeasedPartitions are held
		}
		token := r.d.leases.NextToken()
		sent := r.d.clock.Now() // the lease lives at least LeaseTTL from here
		ok, err := r.acquire(ctx, p, token)
		if err != nil || !ok {
			r.d.share.release()
		}
		if err != nil {
			return err
		}
		if ok {
			r.d.owned.take(p, token, sent) // the worker gives the slot back when it exits
		}
	}
	return nil
}

// setLive records the live members of the group from the last heartbeat.
func (r *rebalancer) setLive(live []lease.Member) {
	names := make([]string, len(live))
	for i, m := range live {
		names[i] = m.Name
	}
	r.mu.Lock()
	r.live = names
	r.mu.Unlock()
}

// liveMembers are the names of the group's live members at the last heartbeat.
func (r *rebalancer) liveMembers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live
}

// reportPartitions updates the partition gauges after a round.
func (r *rebalancer) reportPartitions(n int) {
	eligible := 0
	for p := 0; p < n; p++ {
		if r.d.self.Eligible(p) {
			eligible++
		}
	}
	m, l := r.d.metrics, r.d.labels
	m.EligiblePartitions(l, eligible)
	m.LeasedPartitions(l, r.d.owned.count())
	m.MaxLeasedPartitions(l, r.d.self.MaxLeased)
}

// refreshPause reads whether an operator paused the group (admin.PauseGroup) and opens or
// closes the subscription's group gate, logging each change once.
func (r *rebalancer) refreshPause(ctx context.Context) error {
	p, err := r.d.reg.Paused(ctx, r.d.reg.PauseKey(r.d.view.topic, r.d.group, r.d.view.dlq))
	if err != nil {
		return err
	}
	if p.Paused && p.Since.IsZero() {
		p.Since = r.d.clock.Now()
	}
	if !r.d.pause.Set(p.Paused, p.Since) {
		return nil
	}
	if p.Paused {
		r.d.log.Info("The group was paused by an operator: delivery stops until it is resumed", watermill.LogFields{"since": p.Since})
	} else {
		r.d.log.Info("The group was resumed by an operator", nil)
	}
	r.d.paused()
	return nil
}
