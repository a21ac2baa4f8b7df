//go:build soak

package soak

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// destroyGroup is the group the group-destroy fault hits; the other group is the control,
// which must not notice.
var destroyGroup = groups[0]

// Group-destroy timings: the members must have recreated the group on every partition hit
// within destroyHealTimeout (they heal on the first NOGROUP of a read, within a BlockTime);
// destroyPoll is how often the orchestrator looks.
const (
	destroyHealTimeout = 15 * time.Second
	destroyPoll        = 10 * time.Millisecond
)

// injectDestroy runs XGROUP DESTROY of destroyGroup on one or more partitions while its
// members run, reading the group's commit frontiers in the same transaction, and waits until
// the members have recreated the group on each of them (heal.go).
func injectDestroy(ctx context.Context, r *run) fault {
	f := fault{kind: kindDestroy, group: destroyGroup, hit: r.destroyTargets()}
	f.start = time.Now()
	f.frontiers, f.err = destroyOn(ctx, r.fleet.direct, f.group, f.hit)
	if f.err == nil {
		f.err = waitRecreated(ctx, r.fleet.direct, f.group, f.hit)
	}
	f.end = time.Now()
	return f
}

// destroyTargets picks 1 to all partitions, in order.
func (r *run) destroyTargets() []int {
	hit := r.rng.Perm(partitions)[:1+r.rng.IntN(partitions)]
	slices.Sort(hit)
	return hit
}

// destroyOn destroys group on the partitions hit in one MULTI, after reading its commit
// frontier on each ("" where the group never acked): where the members must recreate it at
// the earliest.
func destroyOn(ctx context.Context, client *redis.Client, group string, hit []int) ([]string, error) {
	space := keys.New("", "")
	frontiers := make([]*redis.StringCmd, len(hit))
	destroys := make([]*redis.IntCmd, len(hit))
	_, err := client.TxPipelined(ctx, func(pl redis.Pipeliner) error {
		for i, p := range hit {
			frontiers[i] = pl.HGet(ctx, space.Commit(topic, p), group)
			destroys[i] = pl.XGroupDestroy(ctx, space.PartitionStream(topic, p), group)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("XGROUP DESTROY %s: %w", group, err)
	}
	out := make([]string, len(hit))
	for i, p := range hit {
		out[i] = frontiers[i].Val()
		if destroys[i].Val() != 1 {
			return nil, fmt.Errorf("XGROUP DESTROY %s on partition %d: the group was not there", group, p)
		}
	}
	return out, nil
}

// waitRecreated waits until group exists again on every partition hit.
func waitRecreated(ctx context.Context, client *redis.Client, group string, hit []int) error {
	tick := time.NewTicker(destroyPoll)
	defer tick.Stop()
	deadline := time.NewTimer(destroyHealTimeout)
	defer deadline.Stop()
	missing := hit
	for {
		missing = groupMissing(ctx, client, group, missing)
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("the members did not recreate group %s on partitions %v within %s", group, missing, destroyHealTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// groupMissing returns the partitions of parts on which group does not exist (or could not
// be read).
func groupMissing(ctx context.Context, client *redis.Client, group string, parts []int) []int {
	space := keys.New("", "")
	cmds := make([]*redis.XInfoGroupsCmd, len(parts))
	_, _ = client.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, p := range parts {
			cmds[i] = pl.XInfoGroups(ctx, space.PartitionStream(topic, p))
		}
		return nil
	})
	var out []int
	for i, p := range parts {
		if !slices.ContainsFunc(cmds[i].Val(), func(g redis.XInfoGroup) bool { return g.Name == group }) {
			out = append(out, p)
		}
	}
	return out
}
