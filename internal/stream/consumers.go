package stream

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ConsumerNames reads XINFO CONSUMERS of every group of groups (groups[p] are the groups of
// keys[p]) in one pipeline and returns group -> set of consumer names over all streams. A
// group or stream deleted meanwhile has none.
func ConsumerNames(ctx context.Context, rdb redis.UniversalClient, keys []string, groups [][]GroupInfo) (map[string]map[string]bool, error) {
	type read struct {
		group string
		cmd   *redis.XInfoConsumersCmd
	}
	var reads []read
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, gs := range groups {
			for _, g := range gs {
				reads = append(reads, read{g.Name, pipe.XInfoConsumers(ctx, keys[p], g.Name)})
			}
		}
		return nil
	})
	out := map[string]map[string]bool{}
	for _, r := range reads {
		if err := r.cmd.Err(); err != nil && !IsNoGroup(err) {
			return nil, fmt.Errorf("consumers of group %q: %w", r.group, err)
		}
		if out[r.group] == nil {
			out[r.group] = map[string]bool{}
		}
		for _, c := range r.cmd.Val() {
			out[r.group][c.Name] = true
		}
	}
	return out, nil
}
