// Package stream holds the Redis Streams commands of streamq: group creation, appends, group
// reads, pending claims and fenced acknowledgements.
package stream

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/group.lua
	groupSrc    string
	groupScript = script.New(groupSrc)
)

// Entry is one stream entry: its id and fields. Values is nil for an entry deleted from the
// stream while it was pending.
type Entry struct {
	ID     string
	Values map[string]any
}

// Batch is what one read returned for one stream, in id order.
type Batch struct {
	Stream  string
	Entries []Entry
}

// entries copies go-redis's reply into Entries.
func entries(msgs []redis.XMessage) []Entry {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]Entry, len(msgs))
	for i, m := range msgs {
		out[i] = Entry{ID: m.ID, Values: m.Values}
	}
	return out
}

// CreateGroups creates group on each stream at startID (MKSTREAM), treating an existing
// group as success, and registers it beside each stream (lua/group.lua, which also runs on a
// full Redis). All go in one pipeline, as EVAL: the script is small, and EVAL is never
// refused for a cold script cache.
func CreateGroups(ctx context.Context, rdb redis.UniversalClient, streams []string, group, startID string) error {
	cmds := make([]*redis.Cmd, len(streams))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = groupScript.Eval(ctx, p, []string{s, keys.RegisteredGroups(s)}, group, startID)
		}
		return nil
	})
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			return fmt.Errorf("create group %q on %s: %w", group, streams[i], err)
		}
	}
	return nil
}

// Append adds an entry with values to stream (XADD, an id made by Redis).
func Append(ctx context.Context, rdb redis.UniversalClient, stream string, values map[string]any) error {
	return rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: values}).Err()
}
