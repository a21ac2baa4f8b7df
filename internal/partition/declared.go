package partition

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
)

// CreateDeclaredGroups creates, on every partition of a topic just registered, the consumer
// groups that Subscribers declared on it before it existed.
func CreateDeclaredGroups(ctx context.Context, rdb redis.UniversalClient, space keys.Space, topic string, t Topic) error {
	if len(t.Groups) == 0 {
		return nil
	}
	streams := make([]string, t.Count)
	for p := range streams {
		streams[p] = space.PartitionStream(topic, p)
	}
	for group, start := range t.Groups {
		if err := stream.CreateGroups(ctx, rdb, streams, group, start); err != nil {
			return fmt.Errorf("create declared groups of %q: %w", topic, err)
		}
	}
	return nil
}

// LogCountDiffers tells that a stated partition count was not applied: the topic keeps its own.
func LogCountDiffers(logger watermill.LoggerAdapter, topic string, stated, actual int) {
	hint := "a topic's partitions cannot shrink"
	if stated > actual {
		hint = fmt.Sprintf("to grow it: streamq partitions grow %s %d (admin.GrowPartitions)", topic, stated)
	}
	logger.Info("Topic exists with another partition count than configured; the topic's count is used", watermill.LogFields{
		"topic": topic, "configured_partitions": stated, "topic_partitions": actual, "hint": hint,
	})
}
