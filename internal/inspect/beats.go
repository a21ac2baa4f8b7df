package inspect

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/member"
)

// Beats reads the latest beat of every group of a topic from its beats hash (keys.Space.Beats,
// member.BeatsKey): group -> beat; a value that is no beat is left out.
func Beats(ctx context.Context, rdb redis.UniversalClient, key string) (map[string]member.Beat, error) {
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
