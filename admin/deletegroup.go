package admin

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DeletedGroup is what DeleteGroup removed.
type DeletedGroup struct {
	Topic, Group string
	Partitions   int      // partitions the group was destroyed on
	Keys         []string // keys deleted: leases, retry sets and items, membership
}

// DeleteGroup removes consumer group from topic: XGROUP DESTROY on every partition (its
// pending entries go with it), its leases, retry sets and their items, its membership zset
// and capabilities, its declaration on the topic, and its fields of each partition's commit
// frontier and retention-loss counts. It releases the retention the group held back
// (QueueInfo's Holder): the partitions shrink back to the topic's MaxLen at their next trim,
// a Publisher's or a lease holder's of another group (every SubscriberConfig.TrimInterval).
// Stop the group's subscribers first: a running member would re-register itself. A group of
// the same name consuming the topic's DLQ (DLQTopic) is left alone. ErrGroupNotFound when the
// group exists on no partition.
func (a *Admin) DeleteGroup(ctx context.Context, topic, group string) (DeletedGroup, error) {
	n, found, err := a.groupOn(ctx, topic, group)
	if err != nil {
		return DeletedGroup{}, err
	}
	d := DeletedGroup{Topic: topic, Group: group}
	if d.Partitions, err = a.destroyGroup(ctx, topic, group, found); err != nil {
		return d, err
	}
	if d.Keys, err = a.deleteKeys(ctx, a.groupKeys(topic, group, n)); err != nil {
		return d, err
	}
	if err := a.reg.ForgetGroup(ctx, topic, group); err != nil {
		return d, err
	}
	return d, a.dropFrontier(ctx, topic, group, n)
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
		}
		return nil
	})
	return wrapErr(err, "remove commit frontier of group %q", group)
}
