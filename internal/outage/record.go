// Package outage keeps the record of a partition waiting out a downstream outage, for the
// operators' tools: the lease holder writes it when the outage starts and at each failed
// probe, and deletes it when the partition resumes. It expires on its own when the holder
// is gone.
package outage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Record is one partition's outage, as its lease holder saw it.
type Record struct {
	Member    string    `json:"member"`
	Since     time.Time `json:"since"`
	NextProbe time.Time `json:"next_probe"`
	Probes    int       `json:"probes"`
	Reason    string    `json:"reason"`
}

// Write stores rec at key for ttl.
func Write(ctx context.Context, rdb redis.UniversalClient, key string, rec Record, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := rdb.Set(ctx, key, b, ttl).Err(); err != nil {
		return fmt.Errorf("write outage record %s: %w", key, err)
	}
	return nil
}

// Clear deletes the record at key.
func Clear(ctx context.Context, rdb redis.UniversalClient, key string) error {
	if err := rdb.Del(ctx, key).Err(); err != nil {
		return fmt.Errorf("clear outage record %s: %w", key, err)
	}
	return nil
}

// Read returns the record at each of keys (nil: none), in one pipeline; a record that does
// not decode reads as none.
func Read(ctx context.Context, rdb redis.UniversalClient, keys []string) ([]*Record, error) {
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read outage records: %w", err)
	}
	out := make([]*Record, len(keys))
	for i, c := range cmds {
		out[i] = Decode(c)
	}
	return out, nil
}

// Decode is the record a GET of its key read (queued in a pipeline); nil when there is none
// or it does not decode.
func Decode(get *redis.StringCmd) *Record {
	var rec Record
	if b, err := get.Bytes(); err == nil && json.Unmarshal(b, &rec) == nil {
		return &rec
	}
	return nil
}
