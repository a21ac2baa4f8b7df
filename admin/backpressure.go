package admin

import (
	"context"

	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// DefaultMaxLen is the length retention of a topic whose Publishers recorded none (the
// Publishers' default Trim.MaxLen).
const DefaultMaxLen = partition.DefaultMaxLen

// Trim policies of LengthRetention.Policy (streamq.TrimAcked and streamq.TrimHard).
const (
	// TrimAcked removes only entries every consumer group registered on the partition has
	// been delivered and acked: a partition grows past MaxLen while a group is behind.
	TrimAcked = "acked"
	// TrimHard removes unacked entries too, counting them per group (PartitionGroupStats.TrimLost).
	TrimHard = "hard"
)

// LengthRetention is a topic's length retention, as its Publishers recorded it in the topic's
// metadata for the lease holders of its partitions.
type LengthRetention struct {
	// MaxLen is about how many entries each partition keeps: DefaultMaxLen when none is
	// recorded, -1 when length retention is off.
	MaxLen int64
	// Exact: partitions are trimmed to exactly MaxLen entries; otherwise whole macro nodes
	// only (up to about 100 entries more are kept).
	Exact bool
	// Policy is TrimAcked (the default) or TrimHard.
	Policy string
	// Recorded: a Publisher recorded this retention; false: the defaults above apply.
	Recorded bool
}

// lengthRetention is the length retention in a topic's metadata, with the Publisher's
// defaults where none is recorded.
func lengthRetention(m partition.Meta) LengthRetention {
	r := LengthRetention{MaxLen: m.MaxLen, Exact: m.ExactLen, Policy: TrimAcked, Recorded: m.MaxLen != 0}
	if r.MaxLen == 0 {
		r.MaxLen = DefaultMaxLen
	}
	if m.TrimPolicy == TrimHard {
		r.Policy = TrimHard
	}
	return r
}

// over is how many of a partition's length entries are beyond MaxLen (0 when it is off).
func (r LengthRetention) over(length int64) int64 {
	if r.MaxLen < 0 {
		return 0
	}
	return max(length-r.MaxLen, 0)
}

// hold is what holds back a partition's entries over MaxLen: the group whose position stops
// the trim, the lowest id it needs, and how many of those entries it holds back. The zero
// hold: nothing is held back.
type hold struct {
	group, needs string
	back         int64
}

// heldBy is what group holds back: h.back when it is the holder, else 0.
func (h hold) heldBy(group string) int64 {
	if h.group != group {
		return 0
	}
	return h.back
}

// holds returns the hold on every partition of a topic whose length retention is r: keys are
// the partitions' streams, infos their XINFO STREAM (nil: never written) and groups their
// XINFO GROUPS. The oldest pending ids of the groups with pending entries on a
// partition over MaxLen take one pipeline (XPENDING summaries; no round trip when there is no
// such group). Under TrimHard no group stops the trim: nothing is held back.
func (a *Admin) holds(ctx context.Context, r LengthRetention, keys []string, infos []*stream.Info, groups [][]stream.GroupInfo) ([]hold, error) {
	over := make([]int64, len(keys))
	for p, info := range infos {
		if info != nil && r.Policy != TrimHard {
			over[p] = r.over(info.Length)
		}
	}
	oldest, err := a.oldestPending(ctx, keys, over, groups)
	if err != nil {
		return nil, err
	}
	seen, err := a.seenOver(ctx, keys, over)
	if err != nil {
		return nil, err
	}
	out := make([]hold, len(keys))
	for p := range out {
		if over[p] > 0 {
			gs, old := withoutExpired(groups[p], oldest[p], seen[p])
			out[p] = holdOn(r.MaxLen, over[p], infos[p], gs, old)
		}
	}
	return out, nil
}

// seenOver reads the group-seen records of the partitions over MaxLen (one pipeline; none
// when no partition is over): nil maps elsewhere.
func (a *Admin) seenOver(ctx context.Context, keys []string, over []int64) ([]map[string]retention.Seen, error) {
	var streams []string
	for p, n := range over {
		if n > 0 {
			streams = append(streams, keys[p])
		}
	}
	out := make([]map[string]retention.Seen, len(keys))
	if len(streams) == 0 {
		return out, nil
	}
	read, err := retention.ReadSeen(ctx, a.rdb, streams)
	if err != nil {
		return nil, err
	}
	i := 0
	for p, n := range over {
		if n > 0 {
			out[p], i = read[i], i+1
		}
	}
	return out, nil
}

// withoutExpired leaves out of a partition's groups (and their oldest pending ids) those that
// retention leaves out for their group expiry: they hold nothing back.
func withoutExpired(groups []stream.GroupInfo, oldest []string, seen map[string]retention.Seen) ([]stream.GroupInfo, []string) {
	var gs []stream.GroupInfo
	var old []string
	for i, g := range groups {
		if seen[g.Name].ExpiredSince.IsZero() {
			gs, old = append(gs, g), append(old, oldest[i])
		}
	}
	return gs, old
}

// holdOn is the hold on a partition over maxLen by over entries: of its groups, the one that
// needs the oldest entry (holder). When Redis reports that group's lag (stream.ReportedLag), the
// entries it still needs are its lag plus its pending entries (a lower bound of the entries
// from its oldest pending id to its last delivered id, exact when it acks in order): it holds
// back those beyond maxLen, at most over, and nothing when it needs no more than maxLen (the
// next trim removes what is over). When the lag is unknown it is taken to hold back all that
// is over.
func holdOn(maxLen, over int64, info *stream.Info, groups []stream.GroupInfo, oldest []string) hold {
	group, needs := holder(positions(groups, oldest), info.LastID)
	if group == "" {
		return hold{}
	}
	if streamid.Less(needs, info.FirstID) {
		// The position after the last delivered id, below the first entry (retention stops
		// there): the entry the group needs is the first one.
		needs = info.FirstID
	}
	g, _ := stream.Find(groups, group)
	l, known := stream.ReportedLag(g, stream.TailOf(info))
	if !known {
		return hold{group: group, needs: needs, back: over}
	}
	if back := min(over, l.N+g.Pending-maxLen); back > 0 {
		return hold{group: group, needs: needs, back: back}
	}
	return hold{}
}

// holder is the group whose position stops retention on a partition whose last entry is
// lastID, and the lowest id it needs; none when there is no group or the group needs no
// entry the partition holds (every group is caught up).
func holder(groups []retention.GroupPosition, lastID string) (group, needs string) {
	group, needs = retention.Holder(groups)
	if group == "" || streamid.Less(lastID, needs) {
		return "", ""
	}
	return group, needs
}

// positions are the retention positions of a partition's groups; oldest holds the oldest
// pending id of each ("" when none), in the order of groups.
func positions(groups []stream.GroupInfo, oldest []string) []retention.GroupPosition {
	out := make([]retention.GroupPosition, len(groups))
	for i, g := range groups {
		out[i] = retention.GroupPosition{Group: g.Name, LastDelivered: g.LastDelivered, OldestPending: oldest[i]}
	}
	return out
}

// oldestPending reads the XPENDING summary of every group with pending entries on a partition
// over MaxLen (over[p] > 0), in one pipeline (no round trip when there is none), and returns
// the oldest pending ids in the shape of groups ("" where there are none). A group deleted
// meanwhile has none.
func (a *Admin) oldestPending(ctx context.Context, keys []string, over []int64, groups [][]stream.GroupInfo) ([][]string, error) {
	names := make([][]string, len(groups))
	for p, gs := range groups {
		names[p] = make([]string, len(gs))
		for i, g := range gs {
			if g.Pending > 0 && over[p] > 0 {
				names[p][i] = g.Name
			}
		}
	}
	return retention.OldestPending(ctx, a.rdb, keys, names)
}
