package stream

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/streamid"
)

// LagScanLimit bounds the XRANGE that counts a group's lag when Redis reports it unknown: a
// larger lag is reported as LagScanLimit, not exact (admin.LagScanLimit).
const LagScanLimit = 10000

// Lag is the number of entries of a stream not yet delivered to a group.
type Lag struct {
	N     int64
	Exact bool // false: N is LagScanLimit, a lower bound
}

// Tail is what ReportedLag checks a lag against: the stream's last generated id and length.
type Tail struct {
	LastID string
	Length int64
}

// TailOf is the tail of a stream's Info; nil (a stream never written) is empty.
func TailOf(info *Info) *Tail {
	if info == nil {
		return &Tail{LastID: "0-0"}
	}
	return &Tail{LastID: info.LastGeneratedID, Length: info.Length}
}

// Lags returns the lag of every group of every stream (groups[p] are the groups of keys[p];
// the result has the same shape). Redis 7 reports it in XINFO GROUPS; where it cannot (-1,
// after deletions or XGROUP SETID), the entries after the group's last delivered id are
// counted in one pipeline: XLEN when the group is at 0-0, else XRANGE "(last-delivered" +
// COUNT LagScanLimit+1.
//
// A lag Redis reports above zero is checked against the stream first (one more pipeline, only
// when there is such a lag): Redis derives it from the group's entries-read counter, which can
// be left behind, for instance after an AOF reload. A group whose last delivered id is the
// stream's last id has no lag, and one reported above the stream's length is counted. tails
// are the streams' tails when the caller has read their XINFO STREAM already (nil: read here
// where needed).
func Lags(ctx context.Context, rdb redis.UniversalClient, keys []string, groups [][]GroupInfo, tails []*Tail) ([][]Lag, error) {
	if tails == nil {
		var err error
		if tails, err = tailsOfLagging(ctx, rdb, keys, groups); err != nil {
			return nil, err
		}
	}
	out := make([][]Lag, len(groups))
	counts := map[[2]int]redis.Cmder{}
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, gs := range groups {
			out[p] = make([]Lag, len(gs))
			for i, g := range gs {
				if l, ok := ReportedLag(g, tails[p]); ok {
					out[p][i] = l
					continue
				}
				counts[[2]int{p, i}] = queueLagCount(ctx, pipe, keys[p], g.LastDelivered)
			}
		}
		return nil
	})
	for at, cmd := range counts {
		l, err := countedLag(cmd)
		if err != nil {
			return nil, fmt.Errorf("count lag of group %q on %s: %w", groups[at[0]][at[1]].Name, keys[at[0]], err)
		}
		out[at[0]][at[1]] = l
	}
	return out, nil
}

// tailsOfLagging reads XINFO STREAM of the streams where Redis reports a group lag above zero
// (nil elsewhere; no round trip when there is none). A stream gone meanwhile is empty.
func tailsOfLagging(ctx context.Context, rdb redis.UniversalClient, keys []string, groups [][]GroupInfo) ([]*Tail, error) {
	need := make([]bool, len(keys))
	asked := false
	for p, gs := range groups {
		for _, g := range gs {
			if g.Lag > 0 {
				need[p], asked = true, true
			}
		}
	}
	tails := make([]*Tail, len(keys))
	if !asked {
		return tails, nil
	}
	reads := make([]func() (*Info, error), len(keys))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range reads {
			if need[p] {
				reads[p] = QueueInfo(ctx, pipe, keys[p])
			}
		}
		return nil
	})
	for p, read := range reads {
		if read == nil {
			continue
		}
		info, err := read()
		if err != nil {
			return nil, fmt.Errorf("info of %s: %w", keys[p], err)
		}
		tails[p] = TailOf(info)
	}
	return tails, nil
}

// ReportedLag is the lag Redis reports for g when it can be trusted against the stream's
// tail t (see Lags; nil t: not read); false means it must be counted.
func ReportedLag(g GroupInfo, t *Tail) (Lag, bool) {
	switch {
	case g.Lag == 0:
		return Lag{Exact: true}, true
	case g.Lag < 0 || t == nil:
		return Lag{}, false
	case !streamid.Less(g.LastDelivered, t.LastID):
		return Lag{Exact: true}, true // delivered up to the last id: nothing left
	case g.Lag > t.Length:
		return Lag{}, false // more than the stream holds: the counter is behind
	default:
		return Lag{N: g.Lag, Exact: true}, true
	}
}

// countsWithXLen reports whether a group at lastDelivered is counted with XLEN (at 0-0: every
// entry is after it) rather than a bounded XRANGE.
func countsWithXLen(lastDelivered string) bool {
	ms, seq, _ := streamid.Parse(lastDelivered)
	return ms == 0 && seq == 0
}

func queueLagCount(ctx context.Context, pipe redis.Pipeliner, stream, lastDelivered string) redis.Cmder {
	if countsWithXLen(lastDelivered) {
		return pipe.XLen(ctx, stream)
	}
	return pipe.XRangeN(ctx, stream, "("+lastDelivered, "+", LagScanLimit+1)
}

func countedLag(cmd redis.Cmder) (Lag, error) {
	if err := cmd.Err(); err != nil {
		return Lag{}, err
	}
	switch c := cmd.(type) {
	case *redis.IntCmd:
		return Lag{N: c.Val(), Exact: true}, nil
	case *redis.XMessageSliceCmd:
		return scannedLag(int64(len(c.Val()))), nil
	}
	return Lag{}, fmt.Errorf("unexpected reply %T", cmd)
}

// scannedLag is the lag of a group after whose last delivered id a bounded XRANGE found n
// entries: LagScanLimit, not exact, when the bound was hit.
func scannedLag(n int64) Lag {
	if n <= LagScanLimit {
		return Lag{N: n, Exact: true}
	}
	return Lag{N: LagScanLimit}
}
