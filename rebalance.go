package streamq

import (
	"context"
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/server"
)

// rebalanceLoop heartbeats the membership and moves partitions toward the assignment every
// RebalanceInterval, starting at once.
func (sub *subscription) rebalanceLoop() {
	defer sub.loops.Done()
	ctx, cancel := sub.loopCtx()
	defer cancel()
	for {
		err := sub.rebalance(ctx)
		switch {
		case err == nil || ctx.Err() != nil || errors.Is(err, errForcedDelete):
		case server.IsClosed(err):
			// Closed under us: nothing can work any more, so stop rather than log for ever.
			sub.logger.Error("The Redis client was closed under the subscription: it stops (close the client after the Subscriber)", err, nil)
			sub.stop()
			return
		default:
			server.ReloadOnConnError(ctx, sub.rdb, err)
			sub.logger.Error("Rebalance failed, retrying", err, nil)
		}
		if !sub.waitOrHeal(sub.cfg.RebalanceInterval) {
			return
		}
	}
}

// waitOrHeal blocks for d, until a heal is requested, or until the subscription stops;
// false means it stopped.
func (sub *subscription) waitOrHeal(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-sub.healReq:
	case <-sub.stopping:
		return false
	}
	return true
}

// rebalance is one round: refresh the partition count, heartbeat, read lease owners,
// compute the assignment, hand over what is no longer ours and take what is.
func (sub *subscription) rebalance(ctx context.Context) error {
	if sub.healDue.Swap(false) {
		if err := sub.heal(ctx); err != nil {
			sub.healDue.Store(true) // again next round, after RebalanceInterval
			return err
		}
	}
	n, err := sub.refreshPartitions(ctx)
	if err != nil {
		return err
	}
	live, err := sub.members.Heartbeat(ctx)
	if err != nil {
		return err
	}
	sub.setLive(live)
	current, err := sub.owners(ctx, n, live)
	if err != nil {
		return err
	}
	mine := lease.Owned(lease.Assign(n, live, current), sub.member)
	sub.handOver(mine)
	err = sub.take(ctx, mine, current)
	sub.reportPartitions(n)
	return err
}

// refreshPartitions re-reads the topic's metadata (every round while the topic does not exist
// yet, then every PartitionRefreshInterval) and creates the group on partitions it has not
// joined yet: all of them once a topic it waited for appears, the new ones of a grown topic.
func (sub *subscription) refreshPartitions(ctx context.Context) (int, error) {
	sub.mu.Lock()
	old, readAt := sub.parts, sub.metaReadAt
	sub.mu.Unlock()
	if old > 0 && time.Since(readAt) < sub.cfg.PartitionRefreshInterval {
		return old, nil
	}
	m, err := sub.s.reg.Meta(ctx, sub.view.topic)
	if err != nil {
		return 0, err
	}
	if !m.Exists {
		if old == 0 {
			sub.waitingOnce.Do(func() {
				sub.logger.Info("Waiting for the topic to be created (by a publisher or admin.CreateTopic)", nil)
			})
		} else {
			sub.requestHeal() // the metadata vanished under us
		}
		return old, nil
	}
	if n := m.Count; n > old {
		if err := sub.s.createGroups(ctx, sub.view, old, n); err != nil {
			return 0, err
		}
		if old > 0 {
			sub.logger.Info("Topic grew", watermill.LogFields{"partitions": n, "was": old})
		}
	}
	sub.mu.Lock()
	sub.parts = max(m.Count, old)
	sub.meta, sub.metaReadAt = m, time.Now()
	n := sub.parts
	sub.mu.Unlock()
	return n, nil
}

// lengthRetention is the length retention the topic's publishers recorded.
func (sub *subscription) lengthRetention() lengthRetention {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return recordedRetention(sub.meta)
}

// owners reads the lease owner (member name) of every partition; "" when free or held by a
// member that is not live.
func (sub *subscription) owners(ctx context.Context, n int, live []lease.Member) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = sub.view.lease(i, sub.cfg.ConsumerGroup)
	}
	tokens, err := lease.Owners(ctx, sub.rdb, keys)
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

// handOver gracefully stops the workers of partitions no longer assigned to this member.
func (sub *subscription) handOver(mine []int) {
	keep := make(map[int]bool, len(mine))
	for _, p := range mine {
		keep[p] = true
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for p, w := range sub.workers {
		if !keep[p] && w.beginStop() {
			sub.logger.Debug("Handing partition over", watermill.LogFields{"partition": p})
			go w.shutdown(true)
		}
	}
}

// take acquires the assigned partitions that are free and starts their workers.
func (sub *subscription) take(ctx context.Context, mine []int, current []string) error {
	for _, p := range mine {
		if sub.hasWorker(p) || (current[p] != "" && current[p] != sub.member) {
			continue
		}
		token := sub.leases.NextToken()
		sent := time.Now() // the lease lives at least LeaseTTL from here
		ok, err := sub.leases.Acquire(ctx, sub.view.lease(p, sub.cfg.ConsumerGroup), token)
		if err != nil {
			return err
		}
		if ok {
			sub.startWorker(p, token, sent)
		}
	}
	return nil
}

func (sub *subscription) hasWorker(p int) bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	_, ok := sub.workers[p]
	return ok
}

// setLive records the live members of the group from the last heartbeat.
func (sub *subscription) setLive(live []lease.Member) {
	names := make([]string, len(live))
	for i, m := range live {
		names[i] = m.Name
	}
	sub.mu.Lock()
	sub.live = names
	sub.mu.Unlock()
}

// liveMembers are the names of the group's live members at the last heartbeat.
func (sub *subscription) liveMembers() []string {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.live
}
