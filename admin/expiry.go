package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/retention"
)

// GroupLiveness is what a topic's partitions record of one consumer group's liveness, for
// the group expiry (streamq.RetentionConfig.GroupExpiry): a group with no live member on a
// partition for the expiry stops holding back retention there. Its offsets stay; what
// retention then removes before it acked it is counted in its TrimLost.
type GroupLiveness struct {
	// LastSeen is the latest time a member of the group was seen: its last heartbeat or leave
	// (LastMember.At), or when a lease holder of the group recorded it live on one of the
	// partitions (or a trim first found it registered there), whichever is later; zero when
	// never. With a heartbeat recorded it is accurate to the heartbeat interval.
	LastSeen time.Time
	// LastMember is the member whose heartbeat or leave the group recorded last; nil when
	// none is recorded.
	LastMember *LastMember
	// Expired: on some partition retention left the group out for its expiry, since
	// ExpiredSince (the earliest), on the partitions ExpiredPartitions (in order). A member
	// that takes such a partition makes the group live there again.
	Expired           bool
	ExpiredSince      time.Time
	ExpiredPartitions []int
}

// GroupLiveness reads the liveness records of every group on topic's partitions, in one
// pipeline, and the groups' latest beats (one HGETALL): group -> GroupLiveness (a group never
// recorded is missing).
func (a *Admin) GroupLiveness(ctx context.Context, topic string) (map[string]GroupLiveness, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	return a.liveness(ctx, topic, n)
}

func (a *Admin) liveness(ctx context.Context, topic string, n int) (map[string]GroupLiveness, error) {
	seen, err := retention.ReadSeen(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n))
	if err != nil {
		return nil, err
	}
	out := map[string]GroupLiveness{}
	for p, groups := range seen {
		for g, s := range groups {
			out[g] = out[g].add(p, s)
		}
	}
	last, err := a.lastMembers(ctx, topic)
	if err != nil {
		return nil, err
	}
	for g, m := range last {
		l := out[g]
		l.LastMember = m
		if m.At.After(l.LastSeen) {
			l.LastSeen = m.At
		}
		out[g] = l
	}
	return out, nil
}

// lastMembers reads the latest beat of every group of topic (one HGETALL): group -> member.
func (a *Admin) lastMembers(ctx context.Context, topic string) (map[string]*LastMember, error) {
	beats, err := inspect.Beats(ctx, a.rdb, a.space.Beats(topic))
	if err != nil {
		return nil, fmt.Errorf("last members of %q: %w", topic, err)
	}
	out := make(map[string]*LastMember, len(beats))
	for g, b := range beats {
		out[g] = lastMemberOf(&b)
	}
	return out, nil
}

func (l GroupLiveness) add(p int, s retention.Seen) GroupLiveness {
	if s.LastSeen.After(l.LastSeen) {
		l.LastSeen = s.LastSeen
	}
	if !s.ExpiredSince.IsZero() {
		if !l.Expired || s.ExpiredSince.Before(l.ExpiredSince) {
			l.ExpiredSince = s.ExpiredSince
		}
		l.Expired = true
		l.ExpiredPartitions = append(l.ExpiredPartitions, p)
	}
	return l
}

// addLiveness sets the liveness records of group on each of parts (of topic's n partitions).
func (a *Admin) addLiveness(ctx context.Context, topic, group string, n int, parts []PartitionGroupStats) error {
	seen, err := retention.ReadSeen(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n))
	if err != nil {
		return err
	}
	for i, p := range parts {
		if p.Partition < len(seen) {
			s := seen[p.Partition][group]
			parts[i].LastSeen, parts[i].ExpiredSince = s.LastSeen, s.ExpiredSince
		}
	}
	return nil
}
