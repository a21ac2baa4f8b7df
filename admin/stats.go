package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// PartitionGroupStats is one consumer group on one partition.
type PartitionGroupStats struct {
	Partition int
	Pending   int64 // delivered, not yet acked
	// Lag is the number of entries not yet delivered to the group: Redis 7's XINFO GROUPS
	// "lag". When Redis reports it unknown (after deletions or XGROUP SETID), the entries after
	// LastDeliveredID are counted: XLEN when it is 0-0, else an XRANGE bounded to
	// LagScanLimit (10000) entries. LagExact is false only when that bound was hit; Lag is
	// then LagScanLimit, a lower bound.
	Lag      int64
	LagExact bool
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
	// TimeLag is the seed's time lag: the newest entry's id time minus LastDeliveredID's time
	// (the oldest entry's when the group is at 0-0); 0 when the group is caught up.
	TimeLag time.Duration
	// CommitFrontier is the highest id the group acked on the partition, "" when none.
	CommitFrontier string
	// TrimLost is how many entries hard trimming (TrimHard) removed from the partition before
	// the group acked them, since the partition exists (retention.Losses); 0 under TrimAcked.
	TrimLost int64
	// HoldsBack is how many of the partition's entries over the topic's MaxLen the group holds
	// back: PartitionInfo.HeldBack when the group is the partition's Holder, else 0.
	HoldsBack int64
}

// GroupStats describes one consumer group of a topic.
type GroupStats struct {
	Topic, Group string
	// Members are the live members (heartbeat not expired), sorted.
	Members []string
	Pending int64         // summed over partitions
	Lag     int64         // summed over partitions
	TimeLag time.Duration // the largest of the partitions'
	// TrimLost is the entries hard trimming removed before the group acked them, summed.
	TrimLost int64
	// HoldsBack is the entries over MaxLen the group holds back, summed.
	HoldsBack int64
	// Pause is whether an operator paused the group (PauseGroup), and since when.
	Pause PauseState
	// Partitions holds the partitions on which the group exists, in partition order.
	Partitions []PartitionGroupStats
}

// GroupStats reads the topic's metadata (partition count, length retention), then group's
// position, pending entries, lag, lease, commit frontier and hard-trim losses on every
// partition of topic and its live members, in one pipeline, plus one to count lags Redis
// reports unknown and one for the entries over MaxLen it holds back (HoldsBack; the XPENDING
// summaries of the groups with pending entries on a partition over MaxLen, as QueueInfo
// sends), each only when needed. ErrGroupNotFound when the group exists on no partition.
func (a *Admin) GroupStats(ctx context.Context, topic, group string) (GroupStats, error) {
	if err := checkGroup(group); err != nil {
		return GroupStats{}, err
	}
	meta, err := a.topicMeta(ctx, topic)
	if err != nil {
		return GroupStats{}, err
	}
	view, err := inspect.GroupView(ctx, a.rdb, a.space.Members(topic, group), group, retention.LossField(group), a.statsKeys(topic, group, meta.Count))
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
	gs := GroupStats{Topic: topic, Group: group, Members: view.Members}
	gs.add(found)
	p, err := a.reg.Paused(ctx, a.reg.PauseKey(topic, group, false))
	gs.Pause = pauseState(p)
	return gs, err
}

// statsKeys are the keys GroupStats reads of group on topic's n partitions.
func (a *Admin) statsKeys(topic, group string, n int) []inspect.GroupKeys {
	out := make([]inspect.GroupKeys, n)
	for p := range out {
		out[p] = inspect.GroupKeys{
			Stream: a.space.PartitionStream(topic, p), Lease: a.space.Lease(topic, p, group),
			Commit: a.space.Commit(topic, p), TrimLoss: a.space.TrimLoss(topic, p),
		}
	}
	return out
}

// partitionStats builds the stats of the partitions where group exists; r is the topic's
// length retention.
func (a *Admin) partitionStats(ctx context.Context, topic, group string, r LengthRetention, parts []inspect.GroupPartition) ([]PartitionGroupStats, error) {
	keys := streams(a.space.PartitionStream, topic, 0, len(parts))
	all, infos := make([][]stream.GroupInfo, len(parts)), make([]*stream.Info, len(parts))
	tails := make([]*stream.Tail, len(parts))
	for p, part := range parts {
		all[p], infos[p], tails[p] = part.Groups, part.Info, stream.TailOf(part.Info)
	}
	groups := only(all, group)
	lags, err := stream.Lags(ctx, a.rdb, keys, groups, tails)
	if err != nil {
		return nil, err
	}
	hs, err := a.holds(ctx, r, keys, infos, all)
	if err != nil {
		return nil, fmt.Errorf("retention held back by group %q: %w", group, err)
	}
	var out []PartitionGroupStats
	for p, gs := range groups {
		if len(gs) == 1 {
			st := partitionGroupStats(p, parts[p], gs[0], lags[p][0])
			st.HoldsBack = hs[p].heldBy(group)
			out = append(out, st)
		}
	}
	return out, nil
}

// only keeps group of every partition's groups (none where it does not exist).
func only(all [][]stream.GroupInfo, group string) [][]stream.GroupInfo {
	out := make([][]stream.GroupInfo, len(all))
	for p, gs := range all {
		if g, ok := stream.Find(gs, group); ok {
			out[p] = []stream.GroupInfo{g}
		}
	}
	return out
}

func partitionGroupStats(p int, part inspect.GroupPartition, g stream.GroupInfo, l stream.Lag) PartitionGroupStats {
	info := part.Info
	if info == nil { // never written
		info = &stream.Info{}
	}
	return PartitionGroupStats{
		Partition: p, Pending: g.Pending, Lag: l.N, LagExact: l.Exact,
		LastDeliveredID: g.LastDelivered, EntriesRead: g.EntriesRead, Consumers: int(g.Consumers),
		LeaseOwner: ownerName(part.LeaseToken), LeaseTTL: part.LeaseTTL,
		TimeLag:        timeLag(info.FirstID, info.LastID, g.LastDelivered),
		CommitFrontier: part.Commit, TrimLost: part.TrimLost,
	}
}

func ownerName(token string) string {
	if token == "" {
		return ""
	}
	return lease.TokenMember(token)
}

// timeLag is last's time minus delivered's (first's when delivered is 0-0); 0 when the
// stream is empty or the group has delivered last.
func timeLag(first, last, delivered string) time.Duration {
	if last == "" || !streamid.Less(delivered, last) {
		return 0
	}
	from := delivered
	if ms, seq, _ := streamid.Parse(delivered); ms == 0 && seq == 0 {
		from = first
	}
	return max(streamid.Time(last).Sub(streamid.Time(from)), 0)
}

func (gs *GroupStats) add(parts []PartitionGroupStats) {
	gs.Partitions = parts
	for _, p := range parts {
		gs.Pending += p.Pending
		gs.Lag += p.Lag
		gs.TimeLag = max(gs.TimeLag, p.TimeLag)
		gs.TrimLost += p.TrimLost
		gs.HoldsBack += p.HoldsBack
	}
}
