package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/streamq-dev/streamq/internal/keys"
)

// dlqSuffix ends the Watermill topic name of a topic's DLQ; such names are reserved.
const dlqSuffix = ":dlq"

// CreateTopic registers topic with the given number of partitions: its metadata, its
// partition set and the topic registry, as a Publisher's first write does. The partition
// streams themselves appear with the first message or consumer group. A topic that is already
// registered is ErrTopicExists (its partition count is left alone: see GrowPartitions); an
// invalid name or partitions < 1 is ErrInvalidArgument. Creating a topic removes the tombstone
// a forced DeleteTopic left (keys.Space.TopicTombstone), so that its new members run.
func (a *Admin) CreateTopic(ctx context.Context, topic string, partitions int) error {
	if err := checkTopicName(topic); err != nil {
		return err
	}
	if partitions < 1 {
		return fmt.Errorf("%w: topic %q needs at least 1 partition, got %d", ErrInvalidArgument, topic, partitions)
	}
	_, err := a.partitions(ctx, topic)
	if err == nil {
		return fmt.Errorf("%w: %q", ErrTopicExists, topic)
	}
	if !errors.Is(err, ErrTopicNotFound) {
		return err
	}
	n, err := a.reg.Register(ctx, topic, partitions)
	if err != nil {
		return err
	}
	if n != partitions { // created concurrently with another count
		return fmt.Errorf("%w: %q (with %d partitions)", ErrTopicExists, topic, n)
	}
	return a.reg.ClearTopicDeleted(ctx, topic)
}

func checkTopicName(topic string) error {
	if err := keys.ValidateName("topic", topic); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if strings.HasSuffix(topic, dlqSuffix) {
		return fmt.Errorf("%w: topic %q ends with %q, reserved for dead-letter queues", ErrInvalidArgument, topic, dlqSuffix)
	}
	return nil
}
