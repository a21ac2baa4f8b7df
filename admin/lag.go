package admin

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/streamid"
)

// LagScanLimit bounds the XRANGE that counts a partition's lag when Redis reports it unknown:
// a larger lag is reported as LagScanLimit with LagExact false (GroupInfo.LagUnknown).
const LagScanLimit = 10000

// lag is the number of entries of a partition not yet delivered to a group.
type lag struct {
	n     int64
	exact bool
}

// lags returns the lag of every group of every stream (same shape as groups). Redis 7
// reports it in XINFO GROUPS; where it cannot (nil, after deletions or XGROUP SETID), the
// entries after last-delivered-id are counted in one pipeline: XLEN when the group is at
// 0-0, else XRANGE "(last-delivered" + COUNT LagScanLimit+1.
//
// A lag Redis reports above zero is checked against the stream first (one more pipeline,
// only when there is such a lag): Redis derives it from the group's entries-read counter,
// which can be left behind, for instance after an AOF reload. A group whose last-delivered-id
// is the stream's last id has no lag, and one reported above the stream's length is counted.
// tails are the streams' XINFO STREAM when the caller has read them already (nil: read here
// where needed).
func (a *Admin) lags(ctx context.Context, keys []string, groups [][]redis.XInfoGroup, tails []*tail) ([][]lag, error) {
	if tails == nil {
		var err error
		if tails, err = a.tailsOfLagging(ctx, keys, groups); err != nil {
			return nil, err
		}
	}
	out := make([][]lag, len(groups))
	counts := map[[2]int]redis.Cmder{}
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, gs := range groups {
			out[p] = make([]lag, len(gs))
			for i, g := range gs {
				if l, ok := reportedLag(g, tails[p]); ok {
					out[p][i] = l
					continue
				}
				counts[[2]int{p, i}] = queueLagCount(ctx, pipe, keys[p], g.LastDeliveredID)
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

// tail is what reportedLag checks a lag against: the stream's last id and length.
type tail struct {
	lastID string
	length int64
}

// tailsOfLagging reads XINFO STREAM of the streams where Redis reports a group lag above
// zero (nil elsewhere; no round trip when there is none). A stream gone meanwhile is empty.
func (a *Admin) tailsOfLagging(ctx context.Context, keys []string, groups [][]redis.XInfoGroup) ([]*tail, error) {
	infos := make([]*redis.XInfoStreamCmd, len(keys))
	need := false
	for p, gs := range groups {
		for _, g := range gs {
			if g.Lag > 0 && infos[p] == nil {
				infos[p], need = &redis.XInfoStreamCmd{}, true
			}
		}
	}
	if !need {
		return make([]*tail, len(keys)), nil
	}
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range infos {
			if infos[p] != nil {
				infos[p] = pipe.XInfoStream(ctx, keys[p])
			}
		}
		return nil
	})
	tails := make([]*tail, len(keys))
	for p, info := range infos {
		switch {
		case info == nil:
		case noSuchKey(info.Err()):
			tails[p] = tailOf(nil)
		case info.Err() != nil:
			return nil, fmt.Errorf("info of %s: %w", keys[p], info.Err())
		default:
			tails[p] = tailOf(info.Val())
		}
	}
	return tails, nil
}

// tailOf is the tail of a stream's XINFO STREAM; nil (a stream never written) is empty.
func tailOf(info *redis.XInfoStream) *tail {
	if info == nil {
		return &tail{lastID: "0-0"}
	}
	return &tail{lastID: info.LastGeneratedID, length: info.Length}
}

// reportedLag is the lag Redis reports for g when it can be trusted (see lags); false means
// it must be counted.
func reportedLag(g redis.XInfoGroup, t *tail) (lag, bool) {
	switch {
	case g.Lag == 0:
		return lag{exact: true}, true
	case g.Lag < 0 || t == nil:
		return lag{}, false
	case !streamid.Less(g.LastDeliveredID, t.lastID):
		return lag{exact: true}, true // delivered up to the last id: nothing left
	case g.Lag > t.length:
		return lag{}, false // more than the stream holds: the counter is behind
	default:
		return lag{n: g.Lag, exact: true}, true
	}
}

func queueLagCount(ctx context.Context, pipe redis.Pipeliner, stream, lastDelivered string) redis.Cmder {
	if ms, seq, _ := streamid.Parse(lastDelivered); ms == 0 && seq == 0 {
		return pipe.XLen(ctx, stream)
	}
	return pipe.XRangeN(ctx, stream, "("+lastDelivered, "+", LagScanLimit+1)
}

func countedLag(cmd redis.Cmder) (lag, error) {
	if err := cmd.Err(); err != nil {
		return lag{}, err
	}
	switch c := cmd.(type) {
	case *redis.IntCmd:
		return lag{n: c.Val(), exact: true}, nil
	case *redis.XMessageSliceCmd:
		if n := int64(len(c.Val())); n <= LagScanLimit {
			return lag{n: n, exact: true}, nil
		}
		return lag{n: LagScanLimit}, nil
	}
	return lag{}, fmt.Errorf("unexpected reply %T", cmd)
}
