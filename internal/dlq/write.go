package dlq

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Write appends r to dlqStream as a dead letter and returns its DLQ entry id: a dead letter
// written outside a handler (admin), with no entry of the partition to ack, so no fence. It
// is the same entry Add writes, so it is listed, consumed and replayed like any other.
func Write(ctx context.Context, rdb redis.Cmdable, dlqStream string, r Record) (string, error) {
	id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: dlqStream, Values: r.Fields()}).Result()
	if err != nil {
		return "", fmt.Errorf("write dead letter to %s: %w", dlqStream, err)
	}
	return id, nil
}
