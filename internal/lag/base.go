package lag

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
)

// base is what the first pipeline of Read reads: the server's clock and, per partition, XINFO
// STREAM, XINFO GROUPS and the retry counts.
type base struct {
	now     time.Time
	infos   []*stream.Info
	groups  [][]stream.GroupInfo
	retried []int64 // retry entries ever appended, per partition
}

func (b base) tails() []*stream.Tail {
	out := make([]*stream.Tail, len(b.infos))
	for p, info := range b.infos {
		out[p] = stream.TailOf(info)
	}
	return out
}

func readBase(ctx context.Context, rdb redis.UniversalClient, parts []string) (base, error) {
	var now *redis.TimeCmd
	infos := make([]func() (*stream.Info, error), len(parts))
	groups := make([]func() ([]stream.GroupInfo, error), len(parts))
	counts := make([]*redis.MapStringStringCmd, len(parts))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		now = pipe.Time(ctx)
		for p, k := range parts {
			infos[p] = stream.QueueInfo(ctx, pipe, k)
			groups[p] = stream.QueueGroups(ctx, pipe, k)
			counts[p] = pipe.HGetAll(ctx, keys.RetryCount(k))
		}
		return nil
	})
	if err := now.Err(); err != nil {
		return base{}, fmt.Errorf("read server time: %w", err)
	}
	b := base{now: now.Val(), infos: make([]*stream.Info, len(parts)), groups: make([][]stream.GroupInfo, len(parts)), retried: make([]int64, len(parts))}
	for p, k := range parts {
		var err error
		if b.infos[p], err = infos[p](); err != nil {
			return base{}, fmt.Errorf("info of %s: %w", k, err)
		}
		if b.groups[p], err = groups[p](); err != nil {
			return base{}, fmt.Errorf("groups of %s: %w", k, err)
		}
		if b.retried[p], err = sumCounts(counts[p]); err != nil {
			return base{}, fmt.Errorf("retry counts of %s: %w", k, err)
		}
	}
	return b, nil
}

// sumCounts sums the values of a retry-count hash (group -> count); a value that is not a
// number counts 0.
func sumCounts(cmd *redis.MapStringStringCmd) (int64, error) {
	m, err := cmd.Result()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, v := range m {
		c, _ := strconv.ParseInt(v, 10, 64)
		n += max(c, 0)
	}
	return n, nil
}
