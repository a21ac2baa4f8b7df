package admin

import (
	"context"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
)

// DeletedGroup is what DeleteGroup removed.
type DeletedGroup struct {
	Topic, Group string
	Partitions   int      // partitions the group was destroyed on
	Keys         []string // keys deleted: leases, retry sets and items, membership
	// LiveMembers are the live members a forced delete went past, sorted; nil when none.
	LiveMembers []string
	// Tombstone is the key of the tombstone written for them (keys.Space.GroupTombstone,
	// expiring after keys.TombstoneTTL); "" when LiveMembers is nil.
	Tombstone string
}

// DeleteGroup removes consumer group from topic: XGROUP DESTROY on every partition (its
// pending entries go with it), its leases, retry sets and their items, retry indexes, its membership zset
// and capabilities, its declaration on the topic, and its fields of each partition's commit
// frontier and retention-loss counts. It releases the retention the group held back
// (QueueInfo's Holder): the partitions shrink back to the topic's MaxLen at their next trim,
// a Publisher's or a lease holder's of another group (every RetentionConfig.TrimInterval).
// A group of the same name consuming the topic's DLQ (DLQTopic) is left alone, and its
// members do not count as live members of the group. ErrGroupNotFound when the group exists
// on no partition.
//
// While the group has live members (heartbeat not expired by the server's clock) it refuses
// with a *LiveMembersError (ErrLiveMembers) naming them and deletes nothing: stop the
// group's subscribers first. With DeleteOptions.Force it deletes all the same, writing first
// the group's tombstone (keys.Space.GroupTombstone, keys.TombstoneTTL): the running
// members stop instead of recreating the group. The members are checked once, before
// anything is deleted; one that joins after the check is not seen.
func (a *Admin) DeleteGroup(ctx context.Context, topic, group string, opts ...DeleteOptions) (DeletedGroup, error) {
	n, found, err := a.groupOn(ctx, topic, group)
	if err != nil {
		return DeletedGroup{}, err
	}
	d := DeletedGroup{Topic: topic, Group: group}
	if d.LiveMembers, err = a.groupLive(ctx, topic, group, force(opts)); err != nil {
		return d, err
	}
	if d.LiveMembers != nil {
		// Before anything goes, so that no running member sees the group gone without it.
		if d.Tombstone, err = a.reg.MarkGroupDeleted(ctx, topic, group); err != nil {
			return d, err
		}
	}
	return d, a.removeGroup(ctx, &d, n, found)
}

// groupLive returns group's live members, or a *LiveMembersError when there are some and the
// delete is not forced.
func (a *Admin) groupLive(ctx context.Context, topic, group string, forced bool) ([]string, error) {
	live, err := a.live(ctx, []membership{{key: a.space.Members(topic, group), group: group}})
	if err != nil || len(live) == 0 {
		return nil, err
	}
	if !forced {
		return nil, newLiveMembersError(topic, group, live)
	}
	return live[0].Members, nil
}

// removeGroup destroys the group on the partitions where it was found and deletes its keys,
// declaration and frontier fields, recording what it removed in d.
func (a *Admin) removeGroup(ctx context.Context, d *DeletedGroup, n int, found []bool) error {
	var err error
	if d.Partitions, err = a.destroyGroup(ctx, d.Topic, d.Group, found); err != nil {
		return err
	}
	if d.Keys, err = partition.DeleteKeys(ctx, a.rdb, a.groupKeys(d.Topic, d.Group, n)); err != nil {
		return err
	}
	if err := a.reg.ForgetGroup(ctx, d.Topic, d.Group); err != nil {
		return err
	}
	if err := member.ForgetBeat(ctx, a.rdb, a.space.Members(d.Topic, d.Group)); err != nil {
		return err
	}
	return a.dropFrontier(ctx, d.Topic, d.Group, n)
}

func (a *Admin) destroyGroup(ctx context.Context, topic, group string, found []bool) (int, error) {
	destroyed := 0
	for p, ok := range found {
		if !ok {
			continue
		}
		existed, err := stream.DestroyGroup(ctx, a.rdb, a.space.PartitionStream(topic, p), group)
		if err != nil {
			return destroyed, err
		}
		if existed {
			destroyed++
		}
	}
	return destroyed, nil
}

// groupKeys lists the control keys of group on topic's n partitions.
func (a *Admin) groupKeys(topic, group string, n int) []string {
	out := []string{a.space.Members(topic, group), a.space.MemberCaps(topic, group), a.space.MemberInstances(topic, group),
		a.space.GroupPause(topic, group)}
	for p := range n {
		out = append(out, a.space.Lease(topic, p, group), a.space.Retry(topic, p, group), a.space.RetryItems(topic, p, group),
			keys.RetryIndex(a.space.PartitionStream(topic, p), group), a.space.Outage(topic, p, group))
	}
	return out
}

// dropFrontier removes group's commit frontier, trim-loss counts and stream registration
// from topic's n partitions.
func (a *Admin) dropFrontier(ctx context.Context, topic, group string, n int) error {
	parts := make([]stream.GroupState, n)
	for p := range parts {
		parts[p] = stream.GroupState{
			Stream: a.space.PartitionStream(topic, p), Commit: a.space.Commit(topic, p), TrimLoss: a.space.TrimLoss(topic, p),
		}
	}
	return stream.ForgetGroup(ctx, a.rdb, parts, group, retention.LossFields(group))
}
