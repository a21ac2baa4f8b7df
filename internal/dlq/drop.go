package dlq

import (
	"context"
	_ "embed"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/drop.lua
	dropSrc    string
	dropScript = script.New(dropSrc)
)

// Drop acks dead letter e (of a DLQ stream, for a group that consumes the DLQ as a topic) and
// deletes it from the DLQ, in one script fenced by e.Fence (the group's DLQ lease). It reports
// whether the entry was still there.
func Drop(ctx context.Context, rdb redis.Scripter, e fence.Entry) (bool, error) {
	res, err := fence.Run(ctx, rdb, dropScript, "drop "+e.ID+" of "+e.Stream, []string{e.Fence.Key, e.Stream}, e.Fence.Token, e.Group, e.ID)
	if err != nil {
		return false, err
	}
	return res == int64(1), nil
}
