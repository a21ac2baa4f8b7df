package partition

import (
	"context"
	"fmt"

	"github.com/streamq-dev/streamq/internal/keys"
)

// MarkTopicDeleted writes topic's tombstone (keys.Space.TopicTombstone) for
// keys.TombstoneTTL, after a forced delete under live members: they stop instead of
// recreating the topic. It returns the tombstone's key.
func (r *Registry) MarkTopicDeleted(ctx context.Context, topic string) (string, error) {
	return r.mark(ctx, r.space.TopicTombstone(topic))
}

// MarkGroupDeleted writes the tombstone of group on topic (keys.Space.GroupTombstone) for
// keys.TombstoneTTL, after a forced delete under live members. It returns the key.
func (r *Registry) MarkGroupDeleted(ctx context.Context, topic, group string) (string, error) {
	return r.mark(ctx, r.space.GroupTombstone(topic, group))
}

// ClearTopicDeleted removes topic's tombstone, when the topic is created again.
func (r *Registry) ClearTopicDeleted(ctx context.Context, topic string) error {
	key := r.space.TopicTombstone(topic)
	if err := r.rdb.Del(ctx, key).Err(); err != nil {
		return fmt.Errorf("clear tombstone %s: %w", key, err)
	}
	return nil
}

func (r *Registry) mark(ctx context.Context, key string) (string, error) {
	if err := r.rdb.Set(ctx, key, "1", keys.TombstoneTTL).Err(); err != nil {
		return "", fmt.Errorf("write tombstone %s: %w", key, err)
	}
	return key, nil
}

// Tombstones reports whether topic, or group on it ("" for none), was deleted by force while
// members ran (admin.DeleteTopic / DeleteGroup with Force): running members stop instead of
// recreating what the operator removed.
func (r *Registry) Tombstones(ctx context.Context, topic, group string) (topicDeleted, groupDeleted bool, err error) {
	keys := []string{r.space.TopicTombstone(topic)}
	if group != "" {
		keys = append(keys, r.space.GroupTombstone(topic, group))
	}
	vals, err := r.rdb.MGet(ctx, keys...).Result() // one slot: both carry the tag {topic}
	if err != nil {
		return false, false, fmt.Errorf("read tombstones of %q: %w", topic, err)
	}
	return vals[0] != nil, len(vals) > 1 && vals[1] != nil, nil
}

// ClearTombstones removes the tombstones of topic and of group on it: a new subscription is a
// new intent to consume, after a forced delete as before it.
func (r *Registry) ClearTombstones(ctx context.Context, topic, group string) error {
	if err := r.rdb.Del(ctx, r.space.TopicTombstone(topic), r.space.GroupTombstone(topic, group)).Err(); err != nil {
		return fmt.Errorf("prepare group %q on %q: %w", group, topic, err)
	}
	return nil
}
