package lag

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Held returns how many of the entries each stream holds are retry entries, from the retry
// indexes of its groups (groups[p] are those of streams[p], infos[p] its XINFO STREAM, nil
// when never written): one ZLEXCOUNT per group from the stream's first entry, in one pipeline
// (none when no stream has an entry and a group).
func Held(ctx context.Context, rdb redis.UniversalClient, streams []string, infos []*stream.Info, groups [][]stream.GroupInfo) ([]int64, error) {
	cmds := make([][]*redis.IntCmd, len(streams))
	asked := false
	for p := range streams {
		asked = asked || (infos[p] != nil && infos[p].Length > 0 && len(groups[p]) > 0)
	}
	if asked {
		_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for p, s := range streams {
				cmds[p] = queueHeld(ctx, pipe, s, infos[p], groups[p])
			}
			return nil
		})
	}
	out := make([]int64, len(streams))
	for p, cs := range cmds {
		n, err := sumHeld(cs)
		if err != nil {
			return nil, fmt.Errorf("retries held on %s: %w", streams[p], err)
		}
		out[p] = n
	}
	return out, nil
}

// queueHeld queues the count of the retry entries of each group stream holds (nothing when
// it holds none).
func queueHeld(ctx context.Context, pipe redis.Pipeliner, str string, info *stream.Info, groups []stream.GroupInfo) []*redis.IntCmd {
	if info == nil || info.Length == 0 {
		return nil
	}
	out := make([]*redis.IntCmd, len(groups))
	for i, g := range groups {
		out[i] = pipe.ZLexCount(ctx, keys.RetryIndex(str, g.Name), "["+streamid.Key(info.FirstID), "+")
	}
	return out
}

func sumHeld(cmds []*redis.IntCmd) (int64, error) {
	var n int64
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return 0, err
		}
		n += c.Val()
	}
	return n, nil
}
