// Package retention trims partitions and DLQs by age and length, optionally never past what
// a registered group still needs, and removes offloaded payloads whose entry is gone.
package retention

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// SafeBound is the lowest id a registered group of stream still needs: the oldest pending
// entry of every group and the entry after every group's last delivered one. "" when the
// stream has no group.
func SafeBound(ctx context.Context, rdb redis.UniversalClient, stream string) (string, error) {
	groups, err := rdb.XInfoGroups(ctx, stream).Result()
	if err != nil {
		if redis.HasErrorPrefix(err, "no such key") {
			return "", nil
		}
		return "", fmt.Errorf("groups of %s: %w", stream, err)
	}
	bound := ""
	for _, g := range groups {
		b := streamid.Next(g.LastDeliveredID)
		if g.Pending > 0 {
			p, err := rdb.XPending(ctx, stream, g.Name).Result()
			if err != nil {
				return "", fmt.Errorf("pending of %s group %s: %w", stream, g.Name, err)
			}
			if p.Lower != "" && streamid.Less(p.Lower, b) {
				b = p.Lower
			}
		}
		if bound == "" || streamid.Less(b, bound) {
			bound = b
		}
	}
	return bound, nil
}

// TrimOlder removes entries of stream older than cutoff (exact XTRIM MINID). With safe, it
// stops at SafeBound. It returns how many entries it removed.
func TrimOlder(ctx context.Context, rdb redis.UniversalClient, stream string, cutoff time.Time, safe bool) (int64, error) {
	minID := streamid.Min(cutoff)
	if safe {
		b, err := SafeBound(ctx, rdb, stream)
		if err != nil {
			return 0, err
		}
		if b != "" && streamid.Less(b, minID) {
			minID = b
		}
	}
	n, err := rdb.XTrimMinID(ctx, stream, minID).Result()
	if err != nil {
		return 0, fmt.Errorf("trim %s below %s: %w", stream, minID, err)
	}
	return n, nil
}

// TrimLen keeps at most maxLen entries of stream (exact), returning how many it removed.
func TrimLen(ctx context.Context, rdb redis.UniversalClient, stream string, maxLen int64) (int64, error) {
	n, err := rdb.XTrimMaxLen(ctx, stream, maxLen).Result()
	if err != nil {
		return 0, fmt.Errorf("trim %s to %d: %w", stream, maxLen, err)
	}
	return n, nil
}

// SweepOrphans deletes offloaded payloads of a partition whose entry no longer exists
// (trimmed or deleted). It checks up to limit index members indexed before olderThan,
// starting after cursor (0 the first time), and returns how many it deleted and the cursor
// for the next round (0 once it has gone through the whole index).
func SweepOrphans(ctx context.Context, rdb redis.UniversalClient, stream, index string, key func(ref string) string, olderThan time.Time, cursor int64, limit int64) (int, int64, error) {
	min := "-inf"
	if cursor > 0 {
		min = "(" + strconv.FormatInt(cursor, 10)
	}
	res, err := rdb.ZRangeByScoreWithScores(ctx, index, &redis.ZRangeBy{
		Min: min, Max: strconv.FormatInt(olderThan.UnixMilli(), 10), Count: limit,
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
		if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key(ref))
			p.ZRem(ctx, index, m)
			return nil
		}); err != nil {
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
