package stream

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// RevRangeEach reads, in one pipeline, up to count entries of each stream newest first, from
// ends[i] ("+", an id, or "(id" to exclude it) down to start ("-", an id or "(id"): out[i]
// holds those of streams[i]. A bad id is ErrInvalidID.
func RevRangeEach(ctx context.Context, rdb redis.UniversalClient, streams, ends []string, start string, count int64) ([][]Entry, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(streams))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = pipe.XRevRangeN(ctx, s, ends[i], start, count)
		}
		return nil
	})
	out := make([][]Entry, len(streams))
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", streams[i], invalidID(err))
		}
		out[i] = entries(c.Val())
	}
	return out, nil
}
