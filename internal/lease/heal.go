package lease

import (
	"context"
	"errors"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/stream"
)

// ErrForcedDelete stops a subscription whose topic or group an operator deleted by force.
var ErrForcedDelete = errors.New("deleted by force under running members")

// RequestHeal asks the rebalancer to check at once that the group, the partition streams and
// the topic's metadata still exist, and to recreate what is missing. Components call it when
// Redis answers NOGROUP, or the metadata is gone.
func (r *Rebalancer) RequestHeal() {
	r.healDue.Store(true)
	run.Signal(r.healReq)
}

// heal recreates what disappeared under the running subscription (XGROUP DESTROY, FLUSHALL,
// a Redis restarted without persistence, a failover to an empty replica): the topic's
// metadata with the partition count known here, and the group on every partition at its last
// known position, each logged once. A topic or group an operator deleted by force is not
// recreated: ErrForcedDelete, and the subscription stops.
func (r *Rebalancer) heal(ctx context.Context) error {
	group := r.d.Group
	if !r.d.DeclaresGroup {
		group = "" // a DLQ consumer keeps its group name apart from the topic's groups
	}
	topicGone, groupGone, err := r.d.Registry.Tombstones(ctx, r.d.View.Topic, group)
	if err != nil {
		return err
	}
	if topicGone || groupGone {
		what := map[bool]string{true: "topic", false: "consumer group"}[topicGone]
		r.d.Log.Error("The "+what+" was deleted by force while this member ran: the subscription stops instead of recreating it",
			ErrForcedDelete, nil)
		r.d.StopAll()
		return ErrForcedDelete
	}
	if err := r.healMeta(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	n := r.parts // 0 while the topic was never seen: nothing of it to recreate
	r.mu.Unlock()
	for p := 0; p < n; p++ {
		if err := r.regroup(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// healMeta registers the topic again when its metadata is gone, with the partition count and
// the recorded length retention known here, and declares the group again.
func (r *Rebalancer) healMeta(ctx context.Context) error {
	m, err := r.d.Registry.Meta(ctx, r.d.View.Topic)
	if err != nil || m.Exists {
		return err
	}
	r.mu.Lock()
	n, known := r.parts, r.meta
	r.mu.Unlock()
	if n == 0 {
		return nil // never seen: still waiting for the topic
	}
	var settings []string
	if known.MaxLen != 0 {
		settings = retention.Recorded(known).Settings()
	}
	if _, err := r.d.Registry.RegisterTopic(ctx, r.d.View.Topic, n, settings); err != nil {
		return err
	}
	r.d.Log.Error("The topic's metadata was missing (a flushed or failed-over Redis, a deleted key): registered it again", nil,
		watermill.LogFields{"partitions": n})
	if !r.d.DeclaresGroup {
		return nil
	}
	return r.d.Registry.DeclareGroup(ctx, r.d.View.Topic, r.d.Group, r.d.Config.GroupStartID)
}

// regroup recreates the group on partition p if it is missing, at the later of its commit
// frontier and what this member acked there, else at the group's start id.
func (r *Rebalancer) regroup(ctx context.Context, p int) error {
	v := r.d.View
	created, pos, err := stream.Regroup(ctx, r.d.Client, stream.Lost{Stream: v.Stream(p), Commit: v.Commit(p), Group: r.d.Group,
		Acked: r.d.Owned.HighestAcked(p), StartID: r.d.Config.GroupStartID})
	if err != nil || !created {
		return err
	}
	r.d.Log.Error("The consumer group was missing on the partition (XGROUP DESTROY, a flushed or failed-over Redis): "+
		"recreated it; entries written before may be missing, and entries after its position are delivered again", nil,
		watermill.LogFields{"partition": p, "position": pos})
	return nil
}
