package partition

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrScanUnsupported reports a client ScanKeys cannot scan every node of.
var ErrScanUnsupported = errors.New("scan needs a *redis.Client or *redis.ClusterClient")

// ScanKeys returns the keys matching pattern for which keep is true, scanning every master of
// a Cluster client (SCAN MATCH pattern COUNT 1000), or the one server of a *redis.Client;
// another client is ErrScanUnsupported. keep may be called concurrently.
func ScanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string, keep func(key string) bool) ([]string, error) {
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if k := iter.Val(); keep(k) {
				mu.Lock()
				out = append(out, k)
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		return nil, fmt.Errorf("%w, got %T", ErrScanUnsupported, rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", pattern, err)
	}
	return out, nil
}

// DeleteKeys deletes keys in one pipeline (one DEL each, so it works across Cluster slots)
// and returns those that existed.
func DeleteKeys(ctx context.Context, rdb redis.UniversalClient, keys []string) ([]string, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = pipe.Del(ctx, k)
		}
		return nil
	})
	var deleted []string
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			return deleted, fmt.Errorf("delete %s: %w", keys[i], err)
		}
		if c.Val() > 0 {
			deleted = append(deleted, keys[i])
		}
	}
	return deleted, nil
}

// DeleteEach deletes keys one at a time, in order, and returns how many it deleted before it
// stopped (all of them, or up to the one that failed).
func DeleteEach(ctx context.Context, rdb redis.UniversalClient, keys []string) (int, error) {
	for i, k := range keys {
		if err := rdb.Del(ctx, k).Err(); err != nil {
			return i, fmt.Errorf("delete %s: %w", k, err)
		}
	}
	return len(keys), nil
}
