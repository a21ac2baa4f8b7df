package streamq

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/stream"
)

// lengthRetention is a topic's length retention: what a Publisher is configured with, which it
// records in the topic's metadata for the lease holders of the topic's partitions.
type lengthRetention struct {
	maxLen int64 // -1: off
	exact  bool
	policy TrimPolicy
}

func (l lengthRetention) settings() []string {
	exact := "0"
	if l.exact {
		exact = "1"
	}
	return []string{partition.FieldMaxLen, strconv.FormatInt(l.maxLen, 10), partition.FieldExactLen, exact,
		partition.FieldTrimPolicy, string(l.policy)}
}

// recordedRetention is the length retention in a topic's metadata; the default MaxLen under
// TrimAcked when no publisher recorded one (a topic created by an operator or a Subscriber).
func recordedRetention(m partition.Meta) lengthRetention {
	l := lengthRetention{maxLen: m.MaxLen, exact: m.ExactLen, policy: TrimPolicy(m.TrimPolicy)}
	if l.maxLen == 0 {
		l.maxLen = defaultMaxLen
	}
	if l.policy != TrimHard {
		l.policy = TrimAcked
	}
	return l
}

// rule is the retention rule of one length trim (no rule when off).
func (l lengthRetention) rule() retention.Rule {
	return retention.Rule{MaxLen: max(l.maxLen, 0), Exact: l.exact, Hard: l.policy == TrimHard}
}

// createDeclaredGroups creates, on every partition of a topic just registered, the consumer
// groups that Subscribers declared on it before it existed.
func createDeclaredGroups(ctx context.Context, rdb redis.UniversalClient, space keys.Space, topic string, t partition.Topic) error {
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

// logPartitionCountDiffers tells that a configured partition count was not applied.
func logPartitionCountDiffers(logger watermill.LoggerAdapter, topic string, stated, actual int) {
	hint := "a topic's partitions cannot shrink"
	if stated > actual {
		hint = fmt.Sprintf("to grow it: streamq partitions grow %s %d (admin.GrowPartitions)", topic, stated)
	}
	logger.Info("Topic exists with another partition count than configured; the topic's count is used", watermill.LogFields{
		"topic": topic, "configured_partitions": stated, "topic_partitions": actual, "hint": hint,
	})
}
