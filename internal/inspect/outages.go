package inspect

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/outage"
)

// OutageState is what Outages read of one partition's outage record.
type OutageState struct {
	Record *outage.Record // nil: none
	// WriteRefused, when not nil, is why Redis refuses the record's write now (it wraps
	// outage.ErrRefused).
	WriteRefused error
}

// Outages reads, in one pipeline, the outage record at each of keys and whether Redis takes
// its write now (outage.QueueWritable).
func Outages(ctx context.Context, rdb redis.UniversalClient, keys []string) ([]OutageState, error) {
	gets, probes := make([]*redis.StringCmd, len(keys)), make([]*redis.Cmd, len(keys))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			gets[i], probes[i] = p.Get(ctx, k), outage.QueueWritable(ctx, p, k)
		}
		return nil
	})
	out := make([]OutageState, len(keys))
	for i := range keys {
		if err := gets[i].Err(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("read outage record %s: %w", keys[i], err)
		}
		out[i] = OutageState{Record: outage.Decode(gets[i]), WriteRefused: outage.Writable(probes[i])}
	}
	return out, nil
}
