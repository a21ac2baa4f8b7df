// Package outage keeps the record of a partition waiting out a downstream outage, for the
// operators' tools: the lease holder writes it when the outage starts and at each failed
// probe, and deletes it when the partition resumes. It expires on its own when the holder
// is gone. The write is a small bounded step that runs at maxmemory (lua/write.lua); a
// reader tells a partition with no record from one whose record Redis refused with
// Writable.
package outage

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/write.lua
	writeSrc string
	//go:embed lua/writable.lua
	writableSrc string

	writeScript    = script.New(writeSrc)
	writableScript = script.New(writableSrc)
)

// MaxReason bounds the reason a record keeps, in bytes (a longer one is cut, and ends in
// "…"), and MaxMember the member name: the record stays a small write at maxmemory.
const (
	MaxReason = 512
	MaxMember = 256
)

// Record is one partition's outage, as its lease holder saw it.
type Record struct {
	Member    string    `json:"member"`
	Since     time.Time `json:"since"`
	NextProbe time.Time `json:"next_probe"`
	Probes    int       `json:"probes"`
	Reason    string    `json:"reason"`
}

// Write stores rec at key for ttl (at least a millisecond), its reason and member cut to
// MaxReason and MaxMember bytes. It runs at maxmemory.
func Write(ctx context.Context, rdb redis.UniversalClient, key string, rec Record, ttl time.Duration) error {
	rec.Reason, rec.Member = cut(rec.Reason, MaxReason), cut(rec.Member, MaxMember)
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode outage record %s: %w", key, err)
	}
	if err := writeScript.Run(ctx, rdb, []string{key}, b, max(ttl.Milliseconds(), 1)).Err(); err != nil {
		return fmt.Errorf("write outage record %s: %w", key, err)
	}
	return nil
}

// cut shortens s to at most n bytes, at a rune boundary, ending it in "…" when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	s = s[:n-len(ellipsis)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + ellipsis
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
