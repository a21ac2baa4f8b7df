package admin

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
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
// pending entries go with it), its leases, retry sets and their items, its membership zset
// and capabilities, its declaration on the topic, and its fields of each partition's commit
// frontier and retention-loss counts. It releases the retention the group held back
// (QueueInfo's Holder): the partitions shrink back to the topic's MaxLen at their next trim,
// a Publisher's or a lease holder's of another group (every SubscriberConfig.TrimInterval).
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
func (a *Admin) removeGroup(ctx context.Context, d *DeletedGroup, n int, found []*redis.XInfoGroup) error {
	var err error
	if d.Partitions, err = a.destroyGroup(ctx, d.Topic, d.Group, found); err != nil {
		return err
	}
	if d.Keys, err = a.deleteKeys(ctx, a.groupKeys(d.Topic, d.Group, n)); err != nil {
		return err
	}
	if err := a.reg.ForgetGroup(ctx, d.Topic, d.Group); err != nil {
		return err
	}
	return a.dropFrontier(ctx, d.Topic, d.Group, n)
}

func (a *Admin) destroyGroup(ctx context.Context, topic, group string, found []*redis.XInfoGroup) (int, error) {
	destroyed := 0
	for p, g := range found {
		if g == nil {
			continue
		}
		stream := a.space.PartitionStream(topic, p)
		c, err := a.rdb.XGroupDestroy(ctx, stream, group).Result()
		if err != nil && !noSuchKey(err) {
			return destroyed, fmt.Errorf("destroy group %q on %s: %w", group, stream, err)
		}
		destroyed += int(c)
	}
	return destroyed, nil
}

// groupKeys lists the control keys of group on topic's n partitions.
func (a *Admin) groupKeys(topic, group string, n int) []string {
	out := []string{a.space.Members(topic, group), a.space.MemberCaps(topic, group)}
	for p := range n {
		out = append(out, a.space.Lease(topic, p, group), a.space.Retry(topic, p, group), a.space.RetryItems(topic, p, group))
	}
	return out
}

// deleteKeys deletes keys (one DEL each, so it works across Cluster slots) and returns those
// that existed.
func (a *Admin) deleteKeys(ctx context.Context, keys []string) ([]string, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = pipe.Del(ctx, k)
		}
		return nil
	})
	var deleted []string
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			return deleted, fmt.Errorf("delete %s: %w", keys[i], err)
		}
		if c.Val() > 0 {
			deleted = append(deleted, keys[i])
		}
	}
	return deleted, nil
}

func (a *Admin) dropFrontier(ctx context.Context, topic, group string, n int) error {
	_, err := a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range n {
			pipe.HDel(ctx, a.space.Commit(topic, p), group)
			pipe.HDel(ctx, a.space.TrimLoss(topic, p), "total:"+group, "new:"+group)
			pipe.SRem(ctx, keys.RegisteredGroups(a.space.PartitionStream(topic, p)), group)
		}
		return nil
	})
	return wrapErr(err, "remove commit frontier of group %q", group)
}
