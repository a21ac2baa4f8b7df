package lag

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// plan is the second step of Read: what its pipeline asks of each partition and group, and
// the snapshot built from the answers.
type plan struct {
	b      base
	counts [][]stream.Lag
	only   string
	out    []Partition
	held   [][]*redis.IntCmd // per partition, per group of XINFO GROUPS: its retries held
	rows   []*row
}

// row is one group on one partition: the commands asked for it and its Group.
type row struct {
	p, i       int // partition, index in b.groups[p]
	g          *Group
	skipped    []*redis.IntCmd         // per other group: its retries after the position
	firstOther []*redis.StringSliceCmd // per other group: its first retry after the position
	first      *redis.XMessageSliceCmd // the first entry after the position
	pending    *redis.XPendingExtCmd   // the oldest pending entry
	walkFrom   string                  // set by resolve: walk past other groups' retries from here
}

func newPlan(b base, counts [][]stream.Lag, only string) *plan {
	pl := &plan{b: b, counts: counts, only: only, out: make([]Partition, len(b.infos)), held: make([][]*redis.IntCmd, len(b.infos))}
	for p := range pl.out {
		pl.out[p] = Partition{Index: p, Info: b.infos[p], RetriesAdded: b.retried[p]}
		for i, g := range b.groups[p] {
			if only == "" || g.Name == only {
				pl.out[p].Groups = append(pl.out[p].Groups, groupOf(g))
				pl.rows = append(pl.rows, &row{p: p, i: i})
			}
		}
	}
	for _, r := range pl.rows { // pointers once the slices stopped growing
		r.g = &pl.out[r.p].Groups[pl.groupIndex(r)]
	}
	return pl
}

// groupIndex is r's place among its partition's Groups of the snapshot.
func (pl *plan) groupIndex(r *row) int {
	name := pl.b.groups[r.p][r.i].Name
	for j, g := range pl.out[r.p].Groups {
		if g.Name == name {
			return j
		}
	}
	return 0
}

func groupOf(g stream.GroupInfo) Group {
	return Group{Name: g.Name, LastDelivered: g.LastDelivered, Pending: g.Pending, Consumers: g.Consumers,
		EntriesRead: g.EntriesRead, Exact: true}
}

// read sends the second pipeline and resolves every row from its answers.
func (pl *plan) read(ctx context.Context, rdb redis.UniversalClient, parts []string) error {
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, info := range pl.b.infos {
			pl.held[p] = queueHeld(ctx, pipe, parts[p], info, pl.b.groups[p])
		}
		for _, r := range pl.rows {
			pl.queue(ctx, pipe, r, parts[r.p])
		}
		return nil
	})
	for p, cmds := range pl.held {
		n, err := sumHeld(cmds)
		if err != nil {
			return fmt.Errorf("retries held on %s: %w", parts[p], err)
		}
		pl.out[p].Retries = n
	}
	for _, r := range pl.rows {
		if err := pl.resolve(r); err != nil {
			return fmt.Errorf("lag of group %q on %s: %w", r.g.Name, parts[r.p], err)
		}
	}
	return nil
}

// queue asks, for row r, what is after its position (when anything is) and its oldest
// pending entry (when it has some).
func (pl *plan) queue(ctx context.Context, pipe redis.Pipeliner, r *row, str string) {
	g := pl.b.groups[r.p][r.i]
	if c := pl.counts[r.p][r.i]; c.N > 0 || !c.Exact {
		lower := lowerBound(g.LastDelivered, pl.b.infos[r.p])
		for j, other := range pl.b.groups[r.p] {
			if j == r.i {
				continue
			}
			idx := keys.RetryIndex(str, other.Name)
			r.skipped = append(r.skipped, pipe.ZLexCount(ctx, idx, lower, "+"))
			r.firstOther = append(r.firstOther, pipe.ZRangeByLex(ctx, idx, &redis.ZRangeBy{Min: lower, Max: "+", Count: 1}))
		}
		r.first = pipe.XRangeN(ctx, str, "("+g.LastDelivered, "+", 1)
	}
	if g.Pending > 0 {
		r.pending = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: str, Group: g.Name, Start: "-", End: "+", Count: 1})
	}
}

// lowerBound is the ZLEXCOUNT bound of the retry-index members after position: those of the
// entries after it that the stream still holds (members below its first entry are of trimmed
// entries, not yet dropped).
func lowerBound(position string, info *stream.Info) string {
	if info != nil && info.FirstID != "" && streamid.Less(position, info.FirstID) {
		return "[" + streamid.Key(info.FirstID)
	}
	return "(" + streamid.Key(position)
}

// resolve fills r's Group from the answers: its lag less the other groups' retries, its
// oldest undelivered entry (or where to walk from to find it) and its oldest pending entry.
func (pl *plan) resolve(r *row) error {
	c := pl.counts[r.p][r.i]
	others := ""
	for j, cmd := range r.skipped {
		if err := cmd.Err(); err != nil {
			return err
		}
		r.g.Skipped += cmd.Val()
		ids, err := r.firstOther[j].Result()
		if err != nil {
			return err
		}
		if len(ids) > 0 && (others == "" || ids[0] < others) {
			others = ids[0]
		}
	}
	r.g.Lag, r.g.Exact = max(c.N-r.g.Skipped, 0), c.Exact
	if err := pl.resolveOldest(r, others); err != nil {
		return err
	}
	return resolvePending(r)
}

// resolveOldest sets r's oldest undelivered entry: the first entry after its position, unless
// that is the first of other groups' retries after it (others, a padded id): then the walk
// starts from there.
func (pl *plan) resolveOldest(r *row, others string) error {
	if r.first == nil || r.g.Lag == 0 {
		return nil
	}
	msgs, err := r.first.Result()
	if err != nil || len(msgs) == 0 {
		return err
	}
	if others != "" && streamid.Key(msgs[0].ID) == others {
		r.walkFrom = msgs[0].ID
		return nil
	}
	r.g.Oldest = msgs[0].ID
	return nil
}

func resolvePending(r *row) error {
	if r.pending == nil {
		return nil
	}
	ps, err := r.pending.Result()
	if err != nil && !stream.IsNoGroup(err) {
		return err
	}
	if len(ps) > 0 {
		r.g.OldestPending, r.g.PendingIdle, r.g.PendingDeliveries = ps[0].ID, ps[0].Idle, ps[0].RetryCount
	}
	return nil
}

// walk finds, with the oldest script, the oldest undelivered entry of the rows whose next
// entry is another group's retry.
func (pl *plan) walk(ctx context.Context, rdb redis.UniversalClient, parts []string) error {
	for _, r := range pl.rows {
		if r.walkFrom == "" {
			continue
		}
		var others []string
		for j, g := range pl.b.groups[r.p] {
			if j != r.i {
				others = append(others, keys.RetryIndex(parts[r.p], g.Name))
			}
		}
		w, err := walkOldest(ctx, rdb, parts[r.p], others, r.walkFrom, ScanLimit)
		if err != nil {
			return fmt.Errorf("oldest entry of group %q on %s: %w", r.g.Name, parts[r.p], err)
		}
		r.g.Oldest = w.found
		if w.found == "" && w.looked >= ScanLimit {
			r.g.Oldest, r.g.Exact = w.last, false
		}
	}
	return nil
}

func (pl *plan) snapshot() Snapshot { return Snapshot{Now: pl.b.now, Partitions: pl.out} }
