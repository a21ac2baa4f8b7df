package admin

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/stream"
)

// DeleteOptions changes how DeleteGroup and DeleteTopic treat live members.
type DeleteOptions struct {
	// Force deletes even while members are live, writing a tombstone first
	// (keys.Space.GroupTombstone or TopicTombstone, kept for keys.TombstoneTTL) so that the
	// running members stop their subscriptions instead of recreating what was deleted.
	// Optional; default false: the delete is refused with a *LiveMembersError
	// (ErrLiveMembers) and nothing is deleted.
	Force bool
}

// force reports whether any of opts forces the delete.
func force(opts []DeleteOptions) bool {
	for _, o := range opts {
		if o.Force {
			return true
		}
	}
	return false
}

// LiveGroup is a consumer group of a topic with live members: members whose heartbeat in
// the group's membership zset expires after the Redis server's TIME.
type LiveGroup struct {
	Group string
	// Members consume the topic (keys.Space.Members), sorted.
	Members []string
	// DLQMembers consume the topic's dead-letter queue (streamq.DLQTopic) as this group
	// (keys.Space.DLQMembers), sorted.
	DLQMembers []string
}

// String names the group's live members: `group "g": m1, m2` and, for DLQ consumers,
// `group "g" on the DLQ: m3`, joined by "; ".
func (g LiveGroup) String() string {
	var parts []string
	if len(g.Members) > 0 {
		parts = append(parts, fmt.Sprintf("group %q: %s", g.Group, strings.Join(g.Members, ", ")))
	}
	if len(g.DLQMembers) > 0 {
		parts = append(parts, fmt.Sprintf("group %q on the DLQ: %s", g.Group, strings.Join(g.DLQMembers, ", ")))
	}
	return strings.Join(parts, "; ")
}

// LiveMembers returns the groups of topic that have live members, consuming the topic or its
// dead-letter queue, sorted by group; none is an empty result. The groups are those
// registered on the topic's partition streams or DLQ streams (XINFO GROUPS) and those
// declared on the topic; their membership zsets are read in one script against the server's
// clock. DeleteTopic checks the same, plus any membership key its scan finds.
func (a *Admin) LiveMembers(ctx context.Context, topic string) ([]LiveGroup, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	groups, err := a.knownGroups(ctx, topic, n)
	if err != nil {
		return nil, err
	}
	return a.live(ctx, a.memberships(topic, groups))
}

// knownGroups returns the names of the groups registered on topic's n partitions or their
// DLQs, or declared on the topic, sorted.
func (a *Admin) knownGroups(ctx context.Context, topic string, n int) ([]string, error) {
	keys := append(streams(a.space.PartitionStream, topic, 0, n), streams(a.space.DLQ, topic, 0, n)...)
	groups, err := stream.Groups(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	declared, err := a.reg.DeclaredGroups(ctx, topic)
	if err != nil {
		return nil, err
	}
	return mergeSorted(groupNames(groups), declared), nil
}

// mergeSorted returns the distinct names of a and b, sorted.
func mergeSorted(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// membership is one membership zset: of group on the topic, or on its DLQ.
type membership struct {
	key, group string
	dlq        bool
}

// memberships returns both membership zsets of each group.
func (a *Admin) memberships(topic string, groups []string) []membership {
	out := make([]membership, 0, 2*len(groups))
	for _, g := range groups {
		out = append(out, membership{a.space.Members(topic, g), g, false}, membership{a.space.DLQMembers(topic, g), g, true})
	}
	return out
}

// scannedMemberships returns the membership zsets among keys (DeleteTopic's scan of topic):
// the group is what follows the tag. A capabilities hash beside a zset reads as a group of
// its own, whose key is no zset and so has no live member.
func (a *Admin) scannedMemberships(topic string, keys []string) []membership {
	members, dlq := a.space.Members(topic, ""), a.space.DLQMembers(topic, "") // the prefixes of the groups' keys
	var out []membership
	for _, k := range keys {
		if g, ok := strings.CutPrefix(k, members); ok {
			out = append(out, membership{k, g, false})
		} else if g, ok := strings.CutPrefix(k, dlq); ok {
			out = append(out, membership{k, g, true})
		}
	}
	return out
}

// live reads the live members of ms (one topic's membership zsets, read once each) and
// returns the groups that have some, sorted by group.
func (a *Admin) live(ctx context.Context, ms []membership) ([]LiveGroup, error) {
	ms = uniqueMemberships(ms)
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.key
	}
	res, err := member.Live(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	byGroup := map[string]*LiveGroup{}
	for i, m := range ms {
		if len(res[i]) == 0 {
			continue
		}
		g := byGroup[m.group]
		if g == nil {
			g = &LiveGroup{Group: m.group}
			byGroup[m.group] = g
		}
		if m.dlq {
			g.DLQMembers = res[i]
		} else {
			g.Members = res[i]
		}
	}
	out := make([]LiveGroup, 0, len(byGroup))
	for _, g := range byGroup {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, nil
}

func uniqueMemberships(ms []membership) []membership {
	seen := map[string]bool{}
	out := ms[:0:0]
	for _, m := range ms {
		if !seen[m.key] {
			seen[m.key] = true
			out = append(out, m)
		}
	}
	return out
}
