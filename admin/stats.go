package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/retention"
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
	// Partitions holds the partitions on which the group exists, in partition order.
	Partitions []PartitionGroupStats
}

// partitionReads are the per-partition replies GroupStats pipelines.
type partitionReads struct {
	groups *redis.XInfoGroupsCmd
	info   *redis.XInfoStreamCmd
	owner  *redis.StringCmd
	ttl    *redis.DurationCmd
	commit *redis.StringCmd
	lost   *redis.StringCmd
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
	reads, members, now := a.readGroupStats(ctx, topic, group, meta.Count)
	gs := GroupStats{Topic: topic, Group: group}
	if gs.Members, err = liveMembers(members, now); err != nil {
		return GroupStats{}, fmt.Errorf("members of group %q: %w", group, err)
	}
	found, err := a.partitionStats(ctx, topic, group, lengthRetention(meta), reads)
	if err != nil {
		return GroupStats{}, err
	}
	if len(found) == 0 {
		return GroupStats{}, fmt.Errorf("%w: %q on topic %q", ErrGroupNotFound, group, topic)
	}
	gs.add(found)
	return gs, nil
}

func (a *Admin) readGroupStats(ctx context.Context, topic, group string, n int) ([]partitionReads, *redis.ZSliceCmd, *redis.TimeCmd) {
	reads := make([]partitionReads, n)
	var members *redis.ZSliceCmd
	var now *redis.TimeCmd
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		now = pipe.Time(ctx)
		members = pipe.ZRangeWithScores(ctx, a.space.Members(topic, group), 0, -1)
		for p := range reads {
			stream, leaseKey := a.space.PartitionStream(topic, p), a.space.Lease(topic, p, group)
			reads[p] = partitionReads{
				groups: pipe.XInfoGroups(ctx, stream), info: pipe.XInfoStream(ctx, stream),
				owner: pipe.Get(ctx, leaseKey), ttl: pipe.PTTL(ctx, leaseKey),
				commit: pipe.HGet(ctx, a.space.Commit(topic, p), group),
				lost:   pipe.HGet(ctx, a.space.TrimLoss(topic, p), retention.LossField(group)),
			}
		}
		return nil
	})
	return reads, members, now
}

// liveMembers returns the members whose heartbeat expiry (score, server ms) is after now.
func liveMembers(members *redis.ZSliceCmd, now *redis.TimeCmd) ([]string, error) {
	if err := errors.Join(members.Err(), now.Err()); err != nil {
		return nil, err
	}
	nowMs := float64(now.Val().UnixMilli())
	out := []string{}
	for _, z := range members.Val() {
		if name, _ := z.Member.(string); z.Score > nowMs {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// partitionStats builds the stats of the partitions where group exists; r is the topic's
// length retention.
func (a *Admin) partitionStats(ctx context.Context, topic, group string, r LengthRetention, reads []partitionReads) ([]PartitionGroupStats, error) {
	keys := streams(a.space.PartitionStream, topic, 0, len(reads))
	all, infos, err := replies(keys, group, reads)
	if err != nil {
		return nil, err
	}
	groups, tails := only(all, group), make([]*tail, len(reads))
	for p, info := range infos {
		tails[p] = tailOf(info)
	}
	lags, err := a.lags(ctx, keys, groups, tails)
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
			st := reads[p].stats(p, gs[0], lags[p][0])
			st.HoldsBack = hs[p].heldBy(group)
			out = append(out, st)
		}
	}
	return out, nil
}

// replies are every partition's XINFO GROUPS and XINFO STREAM replies (nil: never written).
func replies(keys []string, group string, reads []partitionReads) ([][]redis.XInfoGroup, []*redis.XInfoStream, error) {
	all, infos := make([][]redis.XInfoGroup, len(reads)), make([]*redis.XInfoStream, len(reads))
	for p, rd := range reads {
		if err := rd.check(); err != nil {
			return nil, nil, fmt.Errorf("stats of group %q on %s: %w", group, keys[p], err)
		}
		all[p], infos[p] = rd.groups.Val(), rd.info.Val()
	}
	return all, infos, nil
}

// only keeps group of every partition's groups (none where it does not exist).
func only(all [][]redis.XInfoGroup, group string) [][]redis.XInfoGroup {
	out := make([][]redis.XInfoGroup, len(all))
	for p, gs := range all {
		if g, ok := find(gs, group); ok {
			out[p] = []redis.XInfoGroup{g}
		}
	}
	return out
}

// check reports the first unexpected error: a missing stream, lease, frontier or loss count
// is not one.
func (r partitionReads) check() error {
	for _, err := range []error{r.groups.Err(), r.info.Err()} {
		if err != nil && !noSuchKey(err) {
			return err
		}
	}
	for _, err := range []error{r.owner.Err(), r.ttl.Err(), r.commit.Err(), r.lost.Err()} {
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

func (r partitionReads) stats(p int, g redis.XInfoGroup, l lag) PartitionGroupStats {
	info := r.info.Val()
	if info == nil { // never written
		info = &redis.XInfoStream{}
	}
	lost, _ := strconv.ParseInt(r.lost.Val(), 10, 64) // "" when none
	return PartitionGroupStats{
		Partition: p, Pending: g.Pending, Lag: l.n, LagExact: l.exact,
		LastDeliveredID: g.LastDeliveredID, EntriesRead: g.EntriesRead, Consumers: int(g.Consumers),
		LeaseOwner: ownerName(r.owner.Val()), LeaseTTL: max(r.ttl.Val(), 0),
		TimeLag:        timeLag(info.FirstEntry.ID, info.LastEntry.ID, g.LastDeliveredID),
		CommitFrontier: r.commit.Val(), TrimLost: lost,
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
