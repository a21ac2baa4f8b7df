package inspect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/stream"
)

// GroupKeys are the keys of one partition a group view reads.
type GroupKeys struct {
	Stream, Lease, Commit, TrimLoss, Outage string
}

// GroupPartition is what a group view read of one partition.
type GroupPartition struct {
	Groups []stream.GroupInfo // every group of the partition's stream
	Info   *stream.Info       // nil: the stream was never written
	// LeaseToken is the group's lease value on the partition ("" when free) and LeaseTTL
	// what is left of it (0 when free).
	LeaseToken string
	LeaseTTL   time.Duration
	Commit     string // the group's commit frontier, "" when none
	TrimLost   int64  // the group's hard-trim losses (its retention.LossField), 0 when none
	// Outage is the group's downstream outage record there (package outage), nil when none.
	Outage *outage.Record
	// WriteRefused, when not nil, is why Redis refuses the outage record's write there now
	// (it wraps outage.ErrRefused): with no record, the outage state is unknown.
	WriteRefused error
}

// Group is one group over a topic's partitions.
type Group struct {
	// Members are the live members: heartbeat expiry after the server's TIME, sorted.
	Members []string
	// Heartbeats are every member the membership zset holds, live or not (a member that
	// stopped without leaving stays until a heartbeat of another one, or the key's expiry,
	// drops it), sorted by name.
	Heartbeats []Heartbeat
	// Time is the server's TIME when read.
	Time  time.Time
	Parts []GroupPartition
	// Last is the group's latest heartbeat or leave (member.BeatsKey), kept after every
	// member is gone; nil when none is recorded.
	Last *member.Beat
}

// Heartbeat is one member's entry in a membership zset.
type Heartbeat struct {
	Member  string
	Expires time.Time // its heartbeat's expiry, on the server's clock
	// Process is the member's host and PID and when it sent its latest heartbeat, as its
	// capabilities record them (empty for a member of an older version).
	Process member.Beat
}

// GroupQuery names the keys GroupView reads of one group of a topic.
type GroupQuery struct {
	Group string
	// Members is the group's membership zset, Caps the capabilities hash beside it.
	Members, Caps string
	LossField     string // the group's field of the trim-loss hashes (retention.LossField)
	Parts         []GroupKeys
}

type groupRead struct {
	groups   func() ([]stream.GroupInfo, error)
	info     func() (*stream.Info, error)
	owner    *redis.StringCmd
	ttl      *redis.DurationCmd
	commit   *redis.StringCmd
	lost     *redis.StringCmd
	outage   *redis.StringCmd
	writable *redis.Cmd
}

// membershipRead is the reads of a group's membership.
type membershipRead struct {
	now     *redis.TimeCmd
	members *redis.ZSliceCmd
	caps    *redis.MapStringStringCmd
	last    *redis.StringCmd
}

// GroupView reads, in one pipeline, the server's TIME, the group's membership zset, its
// capabilities and its latest beat and, on every partition of q.Parts, XINFO GROUPS and XINFO
// STREAM, the group's lease (GET and PTTL), its commit frontier, its loss field of the
// trim-loss hash, its outage record and whether Redis takes that record's write now
// (outage.QueueWritable). A missing stream, lease, frontier, loss count, outage record or
// beat is not an error.
func GroupView(ctx context.Context, rdb redis.UniversalClient, q GroupQuery) (Group, error) {
	reads := make([]groupRead, len(q.Parts))
	var m membershipRead
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		m = queueMembership(ctx, pipe, q)
		for p, k := range q.Parts {
			reads[p] = queuePartition(ctx, pipe, q, k)
		}
		return nil
	})
	g, err := m.group()
	if err != nil {
		return Group{}, fmt.Errorf("members of group %q: %w", q.Group, err)
	}
	g.Parts = make([]GroupPartition, len(q.Parts))
	for p, r := range reads {
		if g.Parts[p], err = r.partition(); err != nil {
			return Group{}, fmt.Errorf("stats of group %q on %s: %w", q.Group, q.Parts[p].Stream, err)
		}
	}
	return g, nil
}

func queueMembership(ctx context.Context, pipe redis.Pipeliner, q GroupQuery) membershipRead {
	beats, field := member.BeatsKey(q.Members)
	return membershipRead{
		now: pipe.Time(ctx), members: pipe.ZRangeWithScores(ctx, q.Members, 0, -1),
		caps: pipe.HGetAll(ctx, q.Caps), last: pipe.HGet(ctx, beats, field),
	}
}

func queuePartition(ctx context.Context, pipe redis.Pipeliner, q GroupQuery, k GroupKeys) groupRead {
	return groupRead{
		groups: stream.QueueGroups(ctx, pipe, k.Stream), info: stream.QueueInfo(ctx, pipe, k.Stream),
		owner: pipe.Get(ctx, k.Lease), ttl: pipe.PTTL(ctx, k.Lease),
		commit: pipe.HGet(ctx, k.Commit, q.Group), lost: pipe.HGet(ctx, k.TrimLoss, q.LossField),
		outage: pipe.Get(ctx, k.Outage), writable: outage.QueueWritable(ctx, pipe, k.Outage),
	}
}

// group is the membership part of a Group.
func (m membershipRead) group() (Group, error) {
	live, err := liveMembers(m.members, m.now)
	if err != nil {
		return Group{}, err
	}
	if err := m.caps.Err(); err != nil {
		return Group{}, err
	}
	g := Group{Members: live, Heartbeats: heartbeats(m.members), Time: m.now.Val()}
	for i, h := range g.Heartbeats {
		g.Heartbeats[i].Process = member.ParseCaps(h.Member, m.caps.Val()[h.Member])
	}
	if b, ok := member.ParseBeat(m.last.Val()); ok {
		g.Last = &b
	}
	return g, nil
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

// heartbeats returns every member of a membership zset read without error, sorted by name.
func heartbeats(members *redis.ZSliceCmd) []Heartbeat {
	out := []Heartbeat{}
	for _, z := range members.Val() {
		name, _ := z.Member.(string)
		out = append(out, Heartbeat{Member: name, Expires: time.UnixMilli(int64(z.Score))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
	return out
}

func (r groupRead) partition() (GroupPartition, error) {
	groups, gerr := r.groups()
	info, ierr := r.info()
	if err := firstErr(gerr, ierr); err != nil {
		return GroupPartition{}, err
	}
	for _, c := range []redis.Cmder{r.owner, r.ttl, r.commit, r.lost, r.outage} {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return GroupPartition{}, err
		}
	}
	lost, _ := strconv.ParseInt(r.lost.Val(), 10, 64) // "" when none
	return GroupPartition{
		Groups: groups, Info: info, LeaseToken: r.owner.Val(), LeaseTTL: max(r.ttl.Val(), 0),
		Commit: r.commit.Val(), TrimLost: lost, Outage: outage.Decode(r.outage), WriteRefused: outage.Writable(r.writable),
	}, nil
}
