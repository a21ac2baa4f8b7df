package admin

import (
	"context"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"
)

// GroupInfo summarises one consumer group of a topic over its partitions.
type GroupInfo struct {
	Name string
	// Consumers are the group's live members on the topic (heartbeat not expired by the
	// server's clock): what consumes it now.
	Consumers int
	// RedisConsumers are the distinct consumer names registered in Redis on any partition
	// (XINFO CONSUMERS), live or not: members that left with entries still pending for them
	// stay until those are claimed (see the consumer hygiene in the README).
	RedisConsumers int
	Pending        int64 // delivered, not yet acked; summed over partitions
	Lag            int64 // entries not yet delivered to the group; summed over partitions
	// LagUnknown: some partition's lag could not be counted exactly (see PartitionGroupStats
	// for the bound), so Lag is a lower bound.
	LagUnknown bool
}

// ConsumerGroups returns every consumer group registered on any partition of topic, sorted
// by name, with live members, Redis consumers, pending entries and lag over partitions.
func (a *Admin) ConsumerGroups(ctx context.Context, topic string) ([]GroupInfo, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	keys := streams(a.space.PartitionStream, topic, 0, n)
	groups, err := a.groupsOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	lags, err := a.lags(ctx, keys, groups, nil)
	if err != nil {
		return nil, err
	}
	consumers, err := a.consumerNames(ctx, keys, groups)
	if err != nil {
		return nil, err
	}
	live, err := a.live(ctx, a.memberships(topic, groupNames(groups)))
	if err != nil {
		return nil, err
	}
	out := summarise(groups, lags, consumers)
	for i := range out {
		for _, l := range live {
			if l.Group == out[i].Name {
				out[i].Consumers = len(l.Members)
			}
		}
	}
	return out, nil
}

func summarise(groups [][]redis.XInfoGroup, lags [][]lag, consumers map[string]map[string]bool) []GroupInfo {
	byName := map[string]*GroupInfo{}
	for p, gs := range groups {
		for i, g := range gs {
			gi := byName[g.Name]
			if gi == nil {
				gi = &GroupInfo{Name: g.Name, RedisConsumers: len(consumers[g.Name])}
				byName[g.Name] = gi
			}
			gi.Pending += g.Pending
			gi.Lag += lags[p][i].n
			gi.LagUnknown = gi.LagUnknown || !lags[p][i].exact
		}
	}
	out := make([]GroupInfo, 0, len(byName))
	for _, gi := range byName {
		out = append(out, *gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// consumerNames reads XINFO CONSUMERS of every group on every stream in one pipeline and
// returns group -> set of consumer names.
func (a *Admin) consumerNames(ctx context.Context, keys []string, groups [][]redis.XInfoGroup) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	for _, r := range a.queryConsumers(ctx, keys, groups) {
		if err := r.cmd.Err(); err != nil && !noGroup(err) {
			return nil, fmt.Errorf("consumers of group %q: %w", r.group, err)
		}
		if out[r.group] == nil {
			out[r.group] = map[string]bool{}
		}
		for _, c := range r.cmd.Val() {
			out[r.group][c.Name] = true
		}
	}
	return out, nil
}

type consumersRead struct {
	group string
	cmd   *redis.XInfoConsumersCmd
}

func (a *Admin) queryConsumers(ctx context.Context, keys []string, groups [][]redis.XInfoGroup) []consumersRead {
	var reads []consumersRead
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, gs := range groups {
			for _, g := range gs {
				reads = append(reads, consumersRead{g.Name, pipe.XInfoConsumers(ctx, keys[p], g.Name)})
			}
		}
		return nil
	})
	return reads
}

// groupsOf reads XINFO GROUPS of every stream in one pipeline; a stream that was never
// written has no groups.
func (a *Admin) groupsOf(ctx context.Context, keys []string) ([][]redis.XInfoGroup, error) {
	cmds := make([]*redis.XInfoGroupsCmd, len(keys))
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = pipe.XInfoGroups(ctx, k)
		}
		return nil
	})
	out := make([][]redis.XInfoGroup, len(keys))
	for i, c := range cmds {
		if err := c.Err(); err != nil && !noSuchKey(err) {
			return nil, fmt.Errorf("groups of %s: %w", keys[i], err)
		}
		out[i] = c.Val()
	}
	return out, nil
}

// groupOn returns the partition count of topic and group's XINFO GROUPS entry on each
// partition (nil where the group does not exist); ErrGroupNotFound when it exists on none.
func (a *Admin) groupOn(ctx context.Context, topic, group string) (int, []*redis.XInfoGroup, error) {
	if err := checkGroup(group); err != nil {
		return 0, nil, err
	}
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, nil, err
	}
	groups, err := a.groupsOf(ctx, streams(a.space.PartitionStream, topic, 0, n))
	if err != nil {
		return 0, nil, err
	}
	found, ok := pick(groups, group)
	if !ok {
		return 0, nil, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	return n, found, nil
}

// pick returns group's entry in each partition's groups (nil where absent) and whether it
// was found at all.
func pick(groups [][]redis.XInfoGroup, group string) ([]*redis.XInfoGroup, bool) {
	out := make([]*redis.XInfoGroup, len(groups))
	found := false
	for p, gs := range groups {
		if g, ok := find(gs, group); ok {
			out[p], found = &g, true
		}
	}
	return out, found
}

// find returns group's entry among one stream's groups.
func find(gs []redis.XInfoGroup, group string) (redis.XInfoGroup, bool) {
	for _, g := range gs {
		if g.Name == group {
			return g, true
		}
	}
	return redis.XInfoGroup{}, false
}

// groupNames returns the distinct group names in groups, sorted.
func groupNames(groups [][]redis.XInfoGroup) []string {
	seen := map[string]bool{}
	var out []string
	for _, gs := range groups {
		for _, g := range gs {
			if !seen[g.Name] {
				seen[g.Name] = true
				out = append(out, g.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// noGroup reports a command on a group (or stream) that does not exist.
func noGroup(err error) bool { return redis.HasErrorPrefix(err, "NOGROUP") }
