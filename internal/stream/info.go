package stream

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Info is what XINFO STREAM tells of a stream. A stream that was never written has no Info
// (nil).
type Info struct {
	Length int64
	Groups int64 // consumer groups registered on the stream
	// FirstID and LastID are the ids of the oldest and newest entries ("" when empty).
	FirstID, LastID string
	// LastGeneratedID is the greatest id ever appended, trimmed or deleted since or not.
	LastGeneratedID string
	EntriesAdded    int64 // entries ever appended (Redis 7)
}

// GroupInfo is what XINFO GROUPS tells of one consumer group of a stream.
type GroupInfo struct {
	Name          string
	Consumers     int64 // Redis consumers registered on the group, live or not
	Pending       int64 // delivered, not yet acked
	LastDelivered string
	EntriesRead   int64 // entries delivered so far (Redis 7; 0 when Redis does not know)
	// Lag is the entries not yet delivered, as Redis reports it: -1 when it cannot tell
	// (after deletions or XGROUP SETID); see Lags.
	Lag int64
}

// IsNoSuchKey reports the XINFO error of a stream that was never written.
func IsNoSuchKey(err error) bool { return err != nil && redis.HasErrorPrefix(err, "no such key") }

// QueueInfo queues XINFO STREAM of key on pipe. The function it returns, called once the
// pipeline ran, gives the reply: nil Info and no error for a stream never written.
func QueueInfo(ctx context.Context, pipe redis.Pipeliner, key string) func() (*Info, error) {
	cmd := pipe.XInfoStream(ctx, key)
	return func() (*Info, error) {
		if err := cmd.Err(); err != nil {
			if IsNoSuchKey(err) {
				return nil, nil
			}
			return nil, err
		}
		return infoOf(cmd.Val()), nil
	}
}

func infoOf(v *redis.XInfoStream) *Info {
	if v == nil {
		return nil
	}
	return &Info{
		Length: v.Length, Groups: v.Groups, FirstID: v.FirstEntry.ID, LastID: v.LastEntry.ID,
		LastGeneratedID: v.LastGeneratedID, EntriesAdded: v.EntriesAdded,
	}
}

// QueueGroups queues XINFO GROUPS of key on pipe. The function it returns, called once the
// pipeline ran, gives the reply: no group and no error for a stream never written.
func QueueGroups(ctx context.Context, pipe redis.Pipeliner, key string) func() ([]GroupInfo, error) {
	cmd := pipe.XInfoGroups(ctx, key)
	return func() ([]GroupInfo, error) {
		if err := cmd.Err(); err != nil {
			if IsNoSuchKey(err) {
				return nil, nil
			}
			return nil, err
		}
		return groupsOf(cmd.Val()), nil
	}
}

func groupsOf(gs []redis.XInfoGroup) []GroupInfo {
	if gs == nil {
		return nil
	}
	out := make([]GroupInfo, len(gs))
	for i, g := range gs {
		out[i] = GroupInfo{
			Name: g.Name, Consumers: g.Consumers, Pending: g.Pending, LastDelivered: g.LastDeliveredID,
			EntriesRead: g.EntriesRead, Lag: g.Lag,
		}
	}
	return out
}

// Groups reads XINFO GROUPS of every stream of keys in one pipeline; a stream that was never
// written has no groups.
func Groups(ctx context.Context, rdb redis.UniversalClient, keys []string) ([][]GroupInfo, error) {
	reads := make([]func() ([]GroupInfo, error), len(keys))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range keys {
			reads[i] = QueueGroups(ctx, pipe, k)
		}
		return nil
	})
	out := make([][]GroupInfo, len(keys))
	for i, read := range reads {
		gs, err := read()
		if err != nil {
			return nil, fmt.Errorf("groups of %s: %w", keys[i], err)
		}
		out[i] = gs
	}
	return out, nil
}

// Find returns group's entry among one stream's groups.
func Find(gs []GroupInfo, group string) (GroupInfo, bool) {
	for _, g := range gs {
		if g.Name == group {
			return g, true
		}
	}
	return GroupInfo{}, false
}
