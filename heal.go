package streamq

import (
	"context"
	"errors"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/stream"
)

// errForcedDelete stops a subscription whose topic or group an operator deleted by force.
var errForcedDelete = errors.New("deleted by force under running members")

// requestHeal asks the rebalancer to check at once that the group, the partition streams and
// the topic's metadata still exist, and to recreate what is missing. Components call it when
// Redis answers NOGROUP, or the metadata is gone.
func (sub *subscription) requestHeal() {
	sub.healDue.Store(true)
	signal(sub.healReq)
}

// heal recreates what disappeared under the running subscription (XGROUP DESTROY, FLUSHALL,
// a Redis restarted without persistence, a failover to an empty replica): the topic's
// metadata with the partition count known here, and the group on every partition at its last
// known position, each logged once. A topic or group an operator deleted by force is not
// recreated: errForcedDelete, and the subscription stops.
func (sub *subscription) heal(ctx context.Context) error {
	group := sub.cfg.ConsumerGroup
	if sub.view.dlq {
		group = "" // a DLQ consumer keeps its group name apart from the topic's groups
	}
	topicGone, groupGone, err := sub.s.reg.Tombstones(ctx, sub.view.topic, group)
	if err != nil {
		return err
	}
	if topicGone || groupGone {
		what := map[bool]string{true: "topic", false: "consumer group"}[topicGone]
		sub.logger.Error("The "+what+" was deleted by force while this member ran: the subscription stops instead of recreating it",
			errForcedDelete, nil)
		sub.stop()
		return errForcedDelete
	}
	if err := sub.healMeta(ctx); err != nil {
		return err
	}
	sub.mu.Lock()
	n := sub.parts // 0 while the topic was never seen: nothing of it to recreate
	sub.mu.Unlock()
	for p := 0; p < n; p++ {
		if err := sub.regroup(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// healMeta registers the topic again when its metadata is gone, with the partition count and
// the recorded length retention known here, and declares the group again.
func (sub *subscription) healMeta(ctx context.Context) error {
	m, err := sub.s.reg.Meta(ctx, sub.view.topic)
	if err != nil || m.Exists {
		return err
	}
	sub.mu.Lock()
	n, known := sub.parts, sub.meta
	sub.mu.Unlock()
	if n == 0 {
		return nil // never seen: still waiting for the topic
	}
	var settings []string
	if known.MaxLen != 0 {
		settings = recordedRetention(known).settings()
	}
	if _, err := sub.s.reg.RegisterTopic(ctx, sub.view.topic, n, settings); err != nil {
		return err
	}
	sub.logger.Error("The topic's metadata was missing (a flushed or failed-over Redis, a deleted key): registered it again", nil,
		watermill.LogFields{"partitions": n})
	if sub.view.dlq {
		return nil
	}
	return sub.s.reg.DeclareGroup(ctx, sub.view.topic, sub.cfg.ConsumerGroup, sub.cfg.GroupStartID)
}

// regroup recreates the group on partition p if it is missing, at the later of its commit
// frontier and what this member acked there, else at GroupStartID.
func (sub *subscription) regroup(ctx context.Context, p int) error {
	acked := ""
	if w := sub.worker(p); w != nil {
		acked = w.acks.highestAcked()
	}
	created, pos, err := stream.Regroup(ctx, sub.rdb, sub.view.stream(p), sub.view.commit(p), sub.cfg.ConsumerGroup, acked, sub.cfg.GroupStartID)
	if err != nil || !created {
		return err
	}
	sub.logger.Error("The consumer group was missing on the partition (XGROUP DESTROY, a flushed or failed-over Redis): "+
		"recreated it; entries written before may be missing, and entries after its position are delivered again", nil,
		watermill.LogFields{"partition": p, "position": pos})
	return nil
}

// worker returns the worker of partition p, nil when this member does not own it.
func (sub *subscription) worker(p int) *worker {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.workers[p]
}
