package admin

import (
	"context"
	"fmt"
	"sort"

	"github.com/streamq-dev/streamq/internal/stream"
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
	groups, err := stream.Groups(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	lags, err := stream.Lags(ctx, a.rdb, keys, groups, nil)
	if err != nil {
		return nil, err
	}
	consumers, err := stream.ConsumerNames(ctx, a.rdb, keys, groups)
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

func summarise(groups [][]stream.GroupInfo, lags [][]stream.Lag, consumers map[string]map[string]bool) []GroupInfo {
	byName := map[string]*GroupInfo{}
	for p, gs := range groups {
		for i, g := range gs {
			gi := byName[g.Name]
			if gi == nil {
				gi = &GroupInfo{Name: g.Name, RedisConsumers: len(consumers[g.Name])}
				byName[g.Name] = gi
			}
			gi.Pending += g.Pending
			gi.Lag += lags[p][i].N
			gi.LagUnknown = gi.LagUnknown || !lags[p][i].Exact
		}
	}
	out := make([]GroupInfo, 0, len(byName))
	for _, gi := range byName {
		out = append(out, *gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// groupOn returns the partition count of topic and whether group exists on each partition;
// ErrGroupNotFound when it exists on none.
func (a *Admin) groupOn(ctx context.Context, topic, group string) (int, []bool, error) {
	if err := checkGroup(group); err != nil {
		return 0, nil, err
	}
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, nil, err
	}
	groups, err := stream.Groups(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n))
	if err != nil {
		return 0, nil, err
	}
	found, ok := pick(groups, group)
	if !ok {
		return 0, nil, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	return n, found, nil
}

// pick returns whether group is among each partition's groups, and whether it was found at
// all.
func pick(groups [][]stream.GroupInfo, group string) ([]bool, bool) {
	out := make([]bool, len(groups))
	found := false
	for p, gs := range groups {
		if _, ok := stream.Find(gs, group); ok {
			out[p], found = true, true
		}
	}
	return out, found
}

// groupNames returns the distinct group names in groups, sorted.
func groupNames(groups [][]stream.GroupInfo) []string {
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

// LagScanLimit bounds the XRANGE that counts a partition's lag when Redis reports it unknown:
// a larger lag is reported as LagScanLimit with LagExact false (GroupInfo.LagUnknown).
const LagScanLimit = 10000

// The lag is counted in internal/stream, with its own copy of the bound.
var _ = [1]struct{}{}[LagScanLimit-stream.LagScanLimit]
