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
func (a *Admin) lags(ctx context.Context, keys []string, groups [][]redis.XInfoGroup) ([][]lag, error) {
	out := make([][]lag, len(groups))
	counts := map[[2]int]redis.Cmder{}
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, gs := range groups {
			out[p] = make([]lag, len(gs))
			for i, g := range gs {
				if g.Lag >= 0 {
					out[p][i] = lag{n: g.Lag, exact: true}
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
