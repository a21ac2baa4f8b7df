package server

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Memory is what INFO memory says of one server's memory: used_memory against maxmemory.
type Memory struct {
	Addr string // "" when the client does not tell
	Used int64  // used_memory, bytes
	Max  int64  // maxmemory, bytes; 0: no limit
	// Err is why INFO memory told nothing (Refused(Err) for a server that will never tell).
	Err error
}

// Known reports whether the server told its memory.
func (m Memory) Known() bool { return m.Err == nil }

// Full reports whether the server is at its maxmemory: with noeviction it refuses what adds
// memory.
func (m Memory) Full() bool { return m.Known() && m.Max > 0 && m.Used >= m.Max }

// Above reports whether used memory is at or above the fraction mark of maxmemory.
func (m Memory) Above(mark float64) bool {
	return m.Known() && m.Max > 0 && float64(m.Used) >= mark*float64(m.Max)
}

// ReadMemory sends INFO memory to every master of a Cluster client, every shard of a Ring, or
// the server of any other client, sorted by address. A Cluster whose masters cannot be listed
// gives one Memory with that error.
func ReadMemory(ctx context.Context, rdb redis.UniversalClient) []Memory {
	var out []Memory
	for _, n := range readEachOf(ctx, rdb, func(ctx context.Context, c redis.Cmdable, addr string) Node {
		m := memoryOf(ctx, c, addr)
		return Node{Addr: addr, Facts: Facts{UsedMemory: m.Used, MaxMemory: m.Max}, Err: m.Err}
	}) {
		out = append(out, Memory{Addr: n.Addr, Used: n.Facts.UsedMemory, Max: n.Facts.MaxMemory, Err: n.Err})
	}
	return out
}

// MemoryOfKey reads INFO memory of the master that holds key (the only one on a single node).
func MemoryOfKey(ctx context.Context, rdb redis.UniversalClient, key string) Memory {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		node, err := c.MasterForKey(ctx, key)
		if err != nil {
			return Memory{Err: err}
		}
		return memoryOf(ctx, node, node.Options().Addr)
	case *redis.Client:
		return memoryOf(ctx, c, c.Options().Addr)
	}
	return memoryOf(ctx, rdb, "")
}

func memoryOf(ctx context.Context, rdb redis.Cmdable, addr string) Memory {
	reply, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return Memory{Addr: addr, Err: err}
	}
	f := ParseInfo(reply)
	return Memory{Addr: addr, Used: f.UsedMemory, Max: f.MaxMemory}
}

// parseBytes reads an INFO byte count; what does not parse is 0.
func parseBytes(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}
