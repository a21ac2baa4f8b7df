package inspect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

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
}

// Heartbeat is one member's entry in a membership zset.
type Heartbeat struct {
	Member  string
	Expires time.Time // its heartbeat's expiry, on the server's clock
}

type groupRead struct {
	groups func() ([]stream.GroupInfo, error)
	info   func() (*stream.Info, error)
	owner  *redis.StringCmd
	ttl    *redis.DurationCmd
	commit *redis.StringCmd
	lost   *redis.StringCmd
	outage *redis.StringCmd
}

// GroupView reads, in one pipeline, the server's TIME, group's membership zset (membersKey)
// and, on every partition of parts, XINFO GROUPS and XINFO STREAM, the group's lease (GET and
// PTTL), its commit frontier, its lossField of the trim-loss hash and its outage record. A
// missing stream, lease, frontier, loss count or outage record is not an error.
func GroupView(ctx context.Context, rdb redis.UniversalClient, membersKey, group, lossField string, parts []GroupKeys) (Group, error) {
	reads := make([]groupRead, len(parts))
	var members *redis.ZSliceCmd
	var now *redis.TimeCmd
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		now = pipe.Time(ctx)
		members = pipe.ZRangeWithScores(ctx, membersKey, 0, -1)
		for p, k := range parts {
			reads[p] = groupRead{
				groups: stream.QueueGroups(ctx, pipe, k.Stream), info: stream.QueueInfo(ctx, pipe, k.Stream),
				owner: pipe.Get(ctx, k.Lease), ttl: pipe.PTTL(ctx, k.Lease),
				commit: pipe.HGet(ctx, k.Commit, group), lost: pipe.HGet(ctx, k.TrimLoss, lossField),
				outage: pipe.Get(ctx, k.Outage),
			}
		}
		return nil
	})
	var g Group
	var err error
	if g.Members, err = liveMembers(members, now); err != nil {
		return Group{}, fmt.Errorf("members of group %q: %w", group, err)
	}
	g.Heartbeats, g.Time = heartbeats(members), now.Val()
	g.Parts = make([]GroupPartition, len(parts))
	for p, r := range reads {
		if g.Parts[p], err = r.partition(); err != nil {
			return Group{}, fmt.Errorf("stats of group %q on %s: %w", group, parts[p].Stream, err)
		}
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
		Commit: r.commit.Val(), TrimLost: lost, Outage: outage.Decode(r.outage),
	}, nil
}
