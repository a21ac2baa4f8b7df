package inspect

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/member"
)

// Beats reads the latest beat of every group of a topic (member.BeatsKey of membersKey, the
// membership zset of any group of it): group -> beat; a value that is no beat is left out.
func Beats(ctx context.Context, rdb redis.UniversalClient, membersKey string) (map[string]member.Beat, error) {
	key, _ := member.BeatsKey(membersKey)
	all, err := rdb.HGetAll(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]member.Beat, len(all))
	for g, v := range all {
		if b, ok := member.ParseBeat(v); ok {
			out[g] = b
		}
	}
	return out, nil
}
