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

// Drop acks dead letter id of dlqStream for group, which consumes the DLQ as a topic, and
// deletes it from the DLQ, in one script fenced by f (the group's DLQ lease). It reports
// whether the entry was still there.
func Drop(ctx context.Context, rdb redis.Scripter, f fence.Fence, dlqStream, group, id string) (bool, error) {
	res, err := fence.Run(ctx, rdb, dropScript, "drop "+id+" of "+dlqStream, []string{f.Key, dlqStream}, f.Token, group, id)
	if err != nil {
		return false, err
	}
	return res == int64(1), nil
}
