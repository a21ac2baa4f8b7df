package admin

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/internal/lag"
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
	// stay until those are claimed (see docs/reliability.md: members restarted with generated names).
	RedisConsumers int
	Pending        int64 // delivered, not yet acked; summed over partitions
	// Lag is the entries the group still has to deliver (GroupLag.Lag), summed over
	// partitions.
	Lag int64
	// LagUnknown: some partition's lag could not be counted exactly (see LagBound), so Lag is
	// a lower bound.
	LagUnknown bool
	// TimeLag and PendingAge are the largest of the partitions' (GroupLag).
	TimeLag, PendingAge time.Duration
	// Expired: on some partition no member was live for the group expiry, and retention no
	// longer waits for the group there (GroupLiveness); its offsets stay.
	Expired bool
	// LastSeen is when a member last held one of the partitions (GroupLiveness.LastSeen);
	// zero when never recorded.
	LastSeen time.Time
}

// ConsumerGroups returns every consumer group registered on any partition of topic, sorted
// by name, with live members, Redis consumers, pending entries and lag over partitions (the
// lag as TopicLag reads it).
func (a *Admin) ConsumerGroups(ctx context.Context, topic string) ([]GroupInfo, error) {
	s, err := a.readLag(ctx, topic, "")
	if err != nil {
		return nil, err
	}
	keys := streams(a.space.PartitionStream, topic, 0, len(s.Partitions))
	groups := groupsOf(s)
	consumers, err := stream.ConsumerNames(ctx, a.rdb, keys, groups)
	if err != nil {
		return nil, err
	}
	live, err := a.live(ctx, a.memberships(topic, groupNames(groups)))
	if err != nil {
		return nil, err
	}
	out := summarise(topicLagOf(topic, s).Groups, consumers)
	seen, err := a.liveness(ctx, topic, len(s.Partitions))
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Expired, out[i].LastSeen = seen[out[i].Name].Expired, seen[out[i].Name].LastSeen
		for _, l := range live {
			if l.Group == out[i].Name {
				out[i].Consumers = len(l.Members)
			}
		}
	}
	return out, nil
}

// groupsOf lists the groups of each partition of a lag snapshot (their names).
func groupsOf(s lag.Snapshot) [][]stream.GroupInfo {
	out := make([][]stream.GroupInfo, len(s.Partitions))
	for p, part := range s.Partitions {
		for _, g := range part.Groups {
			out[p] = append(out[p], stream.GroupInfo{Name: g.Name})
		}
	}
	return out
}

func summarise(lags []GroupLag, consumers map[string]map[string]bool) []GroupInfo {
	out := make([]GroupInfo, 0, len(lags))
	for _, l := range lags {
		out = append(out, GroupInfo{
			Name: l.Group, RedisConsumers: len(consumers[l.Group]), Pending: l.Pending, Lag: l.Lag,
			LagUnknown: !l.Exact, TimeLag: l.TimeLag, PendingAge: l.PendingAge,
		})
	}
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
