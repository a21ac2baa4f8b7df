package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
)

// PartitionGroupStats is one consumer group on one partition.
type PartitionGroupStats struct {
	Partition int
	Pending   int64 // delivered, not yet acked
	// Lag is the number of entries the group still has to deliver (PartitionLag.Lag: other
	// groups' retries, which it skips, are not counted). LagExact is false only when LagBound
	// was hit; Lag is then a lower bound.
	Lag      int64
	LagExact bool
	// Skipped is the other groups' retries after LastDeliveredID (PartitionLag.Skipped).
	Skipped int64
	// LastDeliveredID is the group's position: the next delivery is the first entry after it.
	LastDeliveredID string
	EntriesRead     int64 // entries delivered so far (Redis 7; 0 when Redis does not know)
	// Consumers are the Redis consumers registered on this partition's group (XINFO GROUPS),
	// live or not; GroupStats.Members are the live members.
	Consumers int
	// LeaseOwner is the member holding the partition's lease for the group, "" when free;
	// LeaseTTL is what is left of that lease.
	LeaseOwner string
	LeaseTTL   time.Duration
	// TimeLag is the age of the oldest entry the group has still to deliver, OldestID, on the
	// Redis server's clock (PartitionLag.TimeLag); 0 when the group is caught up.
	TimeLag  time.Duration
	OldestID string
	// PendingAge is the age of the oldest pending entry (PartitionLag.PendingAge).
	PendingAge time.Duration
	// CommitFrontier is the highest id the group acked on the partition, "" when none.
	CommitFrontier string
	// TrimLost is how many entries hard trimming (TrimHard) removed from the partition before
	// the group acked them, since the partition exists (retention.Losses); 0 under TrimAcked.
	TrimLost int64
	// HoldsBack is how many of the partition's entries over the topic's MaxLen the group holds
	// back: PartitionInfo.HeldBack when the group is the partition's Holder, else 0.
	HoldsBack int64
	// LastSeen is when a member of the group last held the partition (zero when never
	// recorded); ExpiredSince, when not zero, since when retention no longer waits for the
	// group there, no member having been live for the group expiry (GroupLiveness).
	LastSeen, ExpiredSince time.Time
	// Outage, when not nil, is the downstream outage the lease holder waits out there: it
	// hands out nothing until a probe succeeds.
	Outage *Outage
	// OutageUnknown, when not nil, says why the outage state is not known there: no outage
	// record, and Redis refuses that record's write now (it wraps ErrWritesRefused), so a
	// lease holder waiting out an outage could not have recorded it.
	OutageUnknown error
}

// GroupStats describes one consumer group of a topic.
type GroupStats struct {
	Topic, Group string
	// Members are the live members (heartbeat not expired), sorted.
	Members []string
	// Heartbeats are the members the group's membership holds, live or not, sorted by name:
	// a member that stopped without leaving (a crash, a lost connection) stays, its
	// heartbeat expired, until a heartbeat of another member or the membership key's expiry
	// (10 heartbeat TTLs) drops it; one that left is gone at once.
	Heartbeats []MemberHeartbeat
	// Time is the Redis server's clock when the members were read.
	Time    time.Time
	Pending int64         // summed over partitions
	Lag     int64         // summed over partitions
	TimeLag time.Duration // the largest of the partitions'
	// PendingAge is the largest of the partitions'.
	PendingAge time.Duration
	// TrimLost is the entries hard trimming removed before the group acked them, summed.
	TrimLost int64
	// HoldsBack is the entries over MaxLen the group holds back, summed.
	HoldsBack int64
	// Pause is whether an operator paused the group (PauseGroup), and since when.
	Pause PauseState
	// Expired: retention no longer waits for the group on some partition (GroupLiveness).
	Expired bool
	// Outages is how many partitions wait out a downstream outage (PartitionGroupStats.Outage).
	Outages int
	// OutagesUnknown is how many partitions have an unknown outage state
	// (PartitionGroupStats.OutageUnknown).
	OutagesUnknown int
	// LastMember is the member whose heartbeat (or leave) the group recorded last, kept a
	// week after the last member is gone; nil when none is recorded.
	LastMember *LastMember
	// Partitions holds the partitions on which the group exists, in partition order.
	Partitions []PartitionGroupStats
}

// GroupStats reads the topic's metadata (partition count, length retention), then group's
// position, pending entries, lease, commit frontier and hard-trim losses on every partition
// of topic and its live members, in one pipeline, its lag as GroupLag reads it, and one
// pipeline for the entries over MaxLen it holds back (HoldsBack; the XPENDING summaries of
// the groups with pending entries on a partition over MaxLen, as QueueInfo sends) only when
// needed. ErrGroupNotFound when the group exists on no partition.
func (a *Admin) GroupStats(ctx context.Context, topic, group string) (GroupStats, error) {
	if err := checkGroup(group); err != nil {
		return GroupStats{}, err
	}
	meta, err := a.topicMeta(ctx, topic)
	if err != nil {
		return GroupStats{}, err
	}
	view, err := inspect.GroupView(ctx, a.rdb, inspect.GroupQuery{
		Group: group, Members: a.space.Members(topic, group), Caps: a.space.MemberCaps(topic, group),
		LossField: retention.LossField(group), Parts: a.statsKeys(topic, group, meta.Count),
	})
	if err != nil {
		return GroupStats{}, err
	}
	found, err := a.partitionStats(ctx, topic, group, lengthRetention(meta), view.Parts)
	if err != nil {
		return GroupStats{}, err
	}
	if len(found) == 0 {
		return GroupStats{}, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	gs := GroupStats{Topic: topic, Group: group, Members: view.Members, Heartbeats: heartbeatsOf(view), Time: view.Time,
		LastMember: lastMemberOf(view.Last)}
	if err := a.addLiveness(ctx, topic, group, meta.Count, found); err != nil {
		return GroupStats{}, err
	}
	gs.add(found)
	p, err := a.reg.Paused(ctx, a.reg.PauseKey(topic, group, false))
	gs.Pause = pauseState(p)
	return gs, err
}

// MemberHeartbeat is one member of a group's membership.
type MemberHeartbeat struct {
	Name string
	// Expires is when its latest heartbeat expires (in the past for a member that stopped
	// without leaving), on the Redis server's clock; the heartbeat was sent one heartbeat TTL
	// (the member's Membership.LeaseTTL) before it, at Sent.
	Expires time.Time
	Live    bool // Expires is after GroupStats.Time
	// Host and PID are the member's process; Sent is when it sent its latest heartbeat. Empty,
	// 0 and zero for a member of a streamq version that did not record them.
	Host string
	PID  int
	Sent time.Time
}

func heartbeatsOf(view inspect.Group) []MemberHeartbeat {
	out := make([]MemberHeartbeat, 0, len(view.Heartbeats))
	for _, h := range view.Heartbeats {
		out = append(out, MemberHeartbeat{Name: h.Member, Expires: h.Expires, Live: h.Expires.After(view.Time),
			Host: h.Process.Host, PID: h.Process.PID, Sent: h.Process.At})
	}
	return out
}

// statsKeys are the keys GroupStats reads of group on topic's n partitions.
func (a *Admin) statsKeys(topic, group string, n int) []inspect.GroupKeys {
	out := make([]inspect.GroupKeys, n)
	for p := range out {
		out[p] = inspect.GroupKeys{
			Stream: a.space.PartitionStream(topic, p), Lease: a.space.Lease(topic, p, group),
			Commit: a.space.Commit(topic, p), TrimLoss: a.space.TrimLoss(topic, p),
			Outage: a.space.Outage(topic, p, group),
		}
	}
	return out
}

// partitionStats builds the stats of the partitions where group exists; r is the topic's
// length retention.
func (a *Admin) partitionStats(ctx context.Context, topic, group string, r LengthRetention, parts []inspect.GroupPartition) ([]PartitionGroupStats, error) {
	keys := streams(a.space.PartitionStream, topic, 0, len(parts))
	all, infos := make([][]stream.GroupInfo, len(parts)), make([]*stream.Info, len(parts))
	for p, part := range parts {
		all[p], infos[p] = part.Groups, part.Info
	}
	gl, err := a.GroupLag(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	hs, err := a.holds(ctx, r, keys, infos, all)
	if err != nil {
		return nil, fmt.Errorf("retention held back by group %q: %w", group, err)
	}
	out := make([]PartitionGroupStats, 0, len(gl.Partitions))
	for _, l := range gl.Partitions {
		if l.Partition >= len(parts) {
			continue // the topic grew between the two reads
		}
		g, _ := stream.Find(all[l.Partition], group)
		st := partitionGroupStats(parts[l.Partition], g, l)
		st.HoldsBack = hs[l.Partition].heldBy(group)
		out = append(out, st)
	}
	return out, nil
}

func partitionGroupStats(part inspect.GroupPartition, g stream.GroupInfo, l PartitionLag) PartitionGroupStats {
	return PartitionGroupStats{
		Partition: l.Partition, Pending: l.Pending, Lag: l.Lag, LagExact: l.Exact, Skipped: l.Skipped,
		LastDeliveredID: l.LastDeliveredID, EntriesRead: g.EntriesRead, Consumers: int(g.Consumers),
		LeaseOwner: ownerName(part.LeaseToken), LeaseTTL: part.LeaseTTL,
		TimeLag: l.TimeLag, OldestID: l.OldestID, PendingAge: l.PendingAge,
		CommitFrontier: part.Commit, TrimLost: part.TrimLost, Outage: outageOf(l.Partition, part.Outage),
		OutageUnknown: outageUnknown(part),
	}
}

func ownerName(token string) string {
	if token == "" {
		return ""
	}
	return member.TokenMember(token)
}

func (gs *GroupStats) add(parts []PartitionGroupStats) {
	gs.Partitions = parts
	for _, p := range parts {
		gs.Pending += p.Pending
		gs.Lag += p.Lag
		gs.TimeLag = max(gs.TimeLag, p.TimeLag)
		gs.PendingAge = max(gs.PendingAge, p.PendingAge)
		gs.TrimLost += p.TrimLost
		gs.HoldsBack += p.HoldsBack
		gs.Expired = gs.Expired || !p.ExpiredSince.IsZero()
		if p.Outage != nil {
			gs.Outages++
		}
		if p.OutageUnknown != nil {
			gs.OutagesUnknown++
		}
	}
}
