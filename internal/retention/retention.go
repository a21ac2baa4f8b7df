// Package retention trims partitions by length and age without removing what a registered
// consumer group still needs (or, under the hard policy, counting what it removes), trims
// DLQs, and removes offloaded payloads whose entry is gone.
package retention

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/streamid"
)

//go:embed lua/trim.lua
var trimSrc string

var trimScript = script.New(trimSrc)

// HardChunk is the most entries one trim script removes under the hard policy (it reads them
// to count what each group had not acked); Trim calls it again while more is due.
const HardChunk = 500

// maxRounds bounds the script calls of one Trim (HardChunk entries each); the next Trim goes on.
const maxRounds = 200

// Rule is one retention rule of a partition stream.
type Rule struct {
	// MaxLen keeps about this many entries (the newest); 0: no length rule.
	MaxLen int64
	// Before removes entries older than this time; zero: no age rule. Only one of MaxLen and
	// Before is used per call.
	Before time.Time
	// Exact trims to the exact threshold; otherwise whole macro nodes only (a few more kept).
	Exact bool
	// Hard removes entries a registered group has not acked too, counting them per group;
	// otherwise retention stops at the oldest entry some group still needs.
	Hard bool
	// Acked removes every entry every registered group acked, whole macro nodes only, however
	// few are left (Redis is short of memory); nothing when no group is registered. It
	// ignores the other fields.
	Acked bool
	// GroupExpiry leaves out of that stop every group not seen live on the partition for
	// longer (keys.GroupSeen, MarkSeen), counting what it removes before such a group acked
	// it as the hard policy does; 0: no group expires.
	GroupExpiry time.Duration
	// Now is when the trim runs, on the caller's clock: what GroupExpiry is measured from,
	// and when a group without a record is first seen.
	Now time.Time
}

// Trimmed is what one Trim removed.
type Trimmed struct {
	Removed int64 // entries removed
	// Unacked is, of those, the entries some group had not acked: the hard policy's, or
	// those only an expired group still needed.
	Unacked int64
	// Expired are the groups this trim was the first to leave out for their expiry.
	Expired []string
}

// Trim applies rule to stream in one atomic script per round, never removing an entry a
// registered group (live or not) has not been delivered and acked, unless rule.Hard; then it
// records in lossKey, per group, how many entries the group lost; so it does for a group
// expired by rule.GroupExpiry, which no longer stops it.
func Trim(ctx context.Context, rdb redis.Scripter, stream, lossKey string, rule Rule) (Trimmed, error) {
	kind, threshold := "len", any(rule.MaxLen)
	switch {
	case rule.Acked:
		kind, threshold, rule = "acked", 0, Rule{GroupExpiry: rule.GroupExpiry, Now: rule.Now}
	case rule.MaxLen <= 0:
		if rule.Before.IsZero() {
			return Trimmed{}, nil
		}
		kind, threshold = "age", streamid.Min(rule.Before)
	}
	var total Trimmed
	for round := 0; round < maxRounds; round++ {
		res, err := trimScript.Run(ctx, rdb, []string{stream, lossKey, keys.GroupSeen(stream)},
			kind, threshold, flag(rule.Exact), flag(rule.Hard), HardChunk,
			max(rule.GroupExpiry.Milliseconds(), 0), rule.Now.UnixMilli()).Slice()
		if err != nil {
			return total, fmt.Errorf("trim %s (%s %v): %w", stream, kind, threshold, err)
		}
		if len(res) != 4 {
			return total, fmt.Errorf("trim %s: unexpected reply %v", stream, res)
		}
		removed, _ := res[0].(int64)
		unacked, _ := res[1].(int64)
		total.Removed += removed
		total.Unacked += unacked
		total.Expired = appendNames(total.Expired, res[3])
		if more, _ := res[2].(string); more != "1" {
			return total, nil
		}
	}
	return total, nil
}

// appendNames appends the strings of a script's array reply to names.
func appendNames(names []string, reply any) []string {
	list, _ := reply.([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			names = append(names, s)
		}
	}
	return names
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

//go:embed lua/takeloss.lua
var takeLossSrc string

var takeLossScript = script.New(takeLossSrc)

// TakeLosses returns how many entries group lost to hard trimming on a partition since the
// last call (any member's), and clears that count; the cumulative count stays. It runs at
// maxmemory too (takeloss.lua).
func TakeLosses(ctx context.Context, rdb redis.UniversalClient, lossKey, group string) (int64, error) {
	n, err := takeLossScript.Run(ctx, rdb, []string{lossKey}, "new:"+group).Int64()
	if err != nil {
		return 0, fmt.Errorf("read trim losses of %s: %w", lossKey, err)
	}
	return n, nil
}

// Losses returns, per group, how many entries hard trimming removed from a partition before
// the group acked them, since the partition exists.
func Losses(ctx context.Context, rdb redis.UniversalClient, lossKey string) (map[string]int64, error) {
	all, err := rdb.HGetAll(ctx, lossKey).Result()
	if err != nil {
		return nil, fmt.Errorf("read trim losses of %s: %w", lossKey, err)
	}
	out := map[string]int64{}
	for k, v := range all {
		if g, ok := strings.CutPrefix(k, "total:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			out[g] = n
		}
	}
	return out, nil
}

// GroupPosition is where one consumer group stands on a partition stream.
type GroupPosition struct {
	Group         string
	LastDelivered string // the last entry delivered to it
	OldestPending string // its oldest delivered, unacked entry; "" when none
}

// Needs is the lowest id the group still needs: its oldest pending entry, or the entry after
// the last one delivered.
func (g GroupPosition) Needs() string {
	b := streamid.Next(g.LastDelivered)
	if g.OldestPending != "" && streamid.Less(g.OldestPending, b) {
		return g.OldestPending
	}
	return b
}

// Holder returns the group whose position stops retention (the lowest Needs) and that id;
// "" when there is no group.
func Holder(groups []GroupPosition) (group, needs string) {
	for _, g := range groups {
		if n := g.Needs(); group == "" || streamid.Less(n, needs) {
			group, needs = g.Group, n
		}
	}
	return group, needs
}

// TrimLen keeps at most maxLen entries of stream (exact), returning how many it removed.
// Operators' trims and DLQ retention use it: it removes entries whether or not a group read them.
func TrimLen(ctx context.Context, rdb redis.UniversalClient, stream string, maxLen int64) (int64, error) {
	n, err := rdb.XTrimMaxLen(ctx, stream, maxLen).Result()
	if err != nil {
		return 0, fmt.Errorf("trim %s to %d: %w", stream, maxLen, err)
	}
	return n, nil
}

// TrimOlderHard removes entries of stream older than cutoff (exact XTRIM MINID), whether or
// not a group read them: DLQ retention.
func TrimOlderHard(ctx context.Context, rdb redis.UniversalClient, stream string, cutoff time.Time) (int64, error) {
	minID := streamid.Min(cutoff)
	n, err := rdb.XTrimMinID(ctx, stream, minID).Result()
	if err != nil {
		return 0, fmt.Errorf("trim %s below %s: %w", stream, minID, err)
	}
	return n, nil
}

// OrphanGrace is how old an offloaded payload must be before a sweep checks whether its entry
// still exists (the entry is appended in the same script, so this only skips work).
const OrphanGrace = time.Minute

// Sweep is one round of a partition's orphan sweep: its stream, its payload index and the
// key of a payload by reference, up to Limit index members indexed before OlderThan, after
// Cursor (0 the first time).
type Sweep struct {
	Stream, Index string
	Key           func(ref string) string
	OlderThan     time.Time
	Cursor, Limit int64
}

// SweepOrphans deletes offloaded payloads of a partition whose entry no longer exists
// (trimmed or deleted), as s says, and returns how many it deleted and the cursor for the
// next round (0 once it has gone through the whole index).
func SweepOrphans(ctx context.Context, rdb redis.UniversalClient, s Sweep) (int, int64, error) {
	stream, index, key, olderThan, cursor, limit := s.Stream, s.Index, s.Key, s.OlderThan, s.Cursor, s.Limit
	from := "-inf"
	if cursor > 0 {
		from = "(" + strconv.FormatInt(cursor, 10)
	}
	res, err := rdb.ZRangeByScoreWithScores(ctx, index, &redis.ZRangeBy{
		Min: from, Max: strconv.FormatInt(olderThan.UnixMilli(), 10), Count: limit,
	}).Result()
	if err != nil || len(res) == 0 {
		return 0, 0, err
	}
	next := int64(0)
	if int64(len(res)) == limit {
		next = int64(res[len(res)-1].Score)
	}
	members := make([]string, len(res))
	for i, z := range res {
		members[i], _ = z.Member.(string)
	}
	n, err := sweep(ctx, rdb, stream, index, key, members)
	return n, next, err
}

func sweep(ctx context.Context, rdb redis.UniversalClient, stream, index string, key func(ref string) string, members []string) (int, error) {
	gone, err := missingEntries(ctx, rdb, stream, members)
	if err != nil {
		return 0, err
	}
	for _, m := range gone {
		_, ref, _ := payload.IndexMember(m)
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key(ref))
			p.ZRem(ctx, index, m)
			return nil
		})
		if err = script.TxError(err, cmds...); err != nil {
			return 0, fmt.Errorf("delete orphaned payload %s: %w", ref, err)
		}
	}
	return len(gone), nil
}

func missingEntries(ctx context.Context, rdb redis.UniversalClient, stream string, members []string) ([]string, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(members))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			id, _, _ := payload.IndexMember(m)
			cmds[i] = p.XRange(ctx, stream, id, id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("check entries of %s: %w", stream, err)
	}
	var gone []string
	for i, c := range cmds {
		if c.Err() == nil && len(c.Val()) == 0 {
			gone = append(gone, members[i])
		}
	}
	return gone, nil
}

// OldestPending reads, in one pipeline (none when nothing is asked), the oldest pending id of
// each group named in groups[p] on streams[p] ("" for a name left empty, a group with nothing
// pending, or one deleted meanwhile), in the shape of groups.
func OldestPending(ctx context.Context, rdb redis.UniversalClient, streams []string, groups [][]string) ([][]string, error) {
	cmds := make([][]*redis.XPendingCmd, len(groups))
	asked := false
	for p, gs := range groups {
		cmds[p] = make([]*redis.XPendingCmd, len(gs))
		for _, g := range gs {
			asked = asked || g != ""
		}
	}
	if asked {
		_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for p, gs := range groups {
				for i, g := range gs {
					if g != "" {
						cmds[p][i] = pipe.XPending(ctx, streams[p], g)
					}
				}
			}
			return nil
		})
	}
	out := make([][]string, len(groups))
	for p, cs := range cmds {
		out[p] = make([]string, len(cs))
		for i, c := range cs {
			switch {
			case c == nil || redis.HasErrorPrefix(c.Err(), "NOGROUP"):
			case c.Err() != nil:
				return nil, fmt.Errorf("pending of group %q on %s: %w", groups[p][i], streams[p], c.Err())
			default:
				out[p][i] = c.Val().Lower
			}
		}
	}
	return out, nil
}
