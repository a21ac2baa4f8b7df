package inspect

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// MemorySamples is how many nodes of a stream MEMORY USAGE samples to estimate its size: a
// stream's nodes hold up to 100 entries each, the oldest first, so the estimate is made of
// the entries a group behind holds back.
const MemorySamples = 8

// MemoryKeys are the keys of one partition whose memory PartitionsMemory reads.
type MemoryKeys struct {
	Stream, DLQ string
	// Retries are, per group, the group's retry zset and the items hash beside it.
	Retries []RetryKeys
}

// RetryKeys are one group's retry zset and its items hash on a partition.
type RetryKeys struct{ Set, Items string }

// PartitionMemory is what PartitionsMemory read of one partition.
type PartitionMemory struct {
	// Entries is the stream's length, StreamBytes its memory (MEMORY USAGE, sampled).
	Entries, StreamBytes int64
	// DeadLetters is the DLQ's length, DeadLetterBytes its memory.
	DeadLetters, DeadLetterBytes int64
	// Retries are, in the order of MemoryKeys.Retries, each group's waiting retries.
	Retries []RetryMemory
}

// EntryBytes is the partition's mean entry size: StreamBytes over Entries (0 when empty).
func (p PartitionMemory) EntryBytes() float64 {
	if p.Entries <= 0 {
		return 0
	}
	return float64(p.StreamBytes) / float64(p.Entries)
}

// RetryMemory is one group's retries waiting on a partition: how many, and the memory of
// their zset and items.
type RetryMemory struct{ Count, Bytes int64 }

type memoryRead struct {
	entries, streamBytes, dlq, dlqBytes *redis.IntCmd
	retries                             [][3]*redis.IntCmd // ZCARD, MEMORY USAGE of the set and of the items
}

// PartitionsMemory reads, in one pipeline, the length and memory (MEMORY USAGE with
// MemorySamples) of every partition's stream and DLQ, and the count and memory of each
// group's retries. A missing key is empty.
func PartitionsMemory(ctx context.Context, rdb redis.UniversalClient, parts []MemoryKeys) ([]PartitionMemory, error) {
	reads := make([]memoryRead, len(parts))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, k := range parts {
			reads[p] = queueMemory(ctx, pipe, k)
		}
		return nil
	})
	out := make([]PartitionMemory, len(parts))
	for p, r := range reads {
		m, err := r.memory()
		if err != nil {
			return nil, fmt.Errorf("memory of %s: %w", parts[p].Stream, err)
		}
		out[p] = m
	}
	return out, nil
}

func queueMemory(ctx context.Context, pipe redis.Pipeliner, k MemoryKeys) memoryRead {
	r := memoryRead{
		entries: pipe.XLen(ctx, k.Stream), streamBytes: pipe.MemoryUsage(ctx, k.Stream, MemorySamples),
		dlq: pipe.XLen(ctx, k.DLQ), dlqBytes: pipe.MemoryUsage(ctx, k.DLQ, MemorySamples),
	}
	for _, rk := range k.Retries {
		r.retries = append(r.retries, [3]*redis.IntCmd{
			pipe.ZCard(ctx, rk.Set), pipe.MemoryUsage(ctx, rk.Set, MemorySamples), pipe.MemoryUsage(ctx, rk.Items, MemorySamples),
		})
	}
	return r
}

func (r memoryRead) memory() (PartitionMemory, error) {
	var m PartitionMemory
	var err error
	for _, f := range []struct {
		cmd *redis.IntCmd
		dst *int64
	}{{r.entries, &m.Entries}, {r.streamBytes, &m.StreamBytes}, {r.dlq, &m.DeadLetters}, {r.dlqBytes, &m.DeadLetterBytes}} {
		if *f.dst, err = intOrNone(f.cmd); err != nil {
			return PartitionMemory{}, err
		}
	}
	for _, rc := range r.retries {
		var rm RetryMemory
		var set, items int64
		if rm.Count, err = intOrNone(rc[0]); err == nil {
			set, err = intOrNone(rc[1])
		}
		if err == nil {
			items, err = intOrNone(rc[2])
		}
		if err != nil {
			return PartitionMemory{}, err
		}
		rm.Bytes = set + items
		m.Retries = append(m.Retries, rm)
	}
	return m, nil
}

// intOrNone is an integer reply, 0 for a missing key (MEMORY USAGE answers nil).
func intOrNone(c *redis.IntCmd) (int64, error) {
	n, err := c.Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}
