package streamq

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/streamq-dev/streamq/internal/keys"
)

// TopicOptions override, for the subscriptions to one topic, the Subscriber's read and
// partition-filter settings. They apply to every Subscribe
// of that topic, the Router's included, so a Router's handlers on several topics of one
// Subscriber can read and filter each topic its own way. A zero field takes the
// Subscriber's value.
type TopicOptions struct {
	// BatchCount is the COUNT of one XREADGROUP per partition of the topic:
	// the most entries one read returns for a partition, and the prefetch bound.
	// Optional; default 0: SubscriberConfig.BatchCount.
	BatchCount int
	// BlockTime is how long one XREADGROUP of the topic blocks.
	// Optional; default 0: SubscriberConfig.BlockTime. Like it, it must be less than
	// LeaseTTL - RenewInterval.
	BlockTime time.Duration
	// PartitionModulo and PartitionRemainder restrict this member, on this topic, to the
	// partitions i with i % PartitionModulo == PartitionRemainder. They replace the
	// Subscriber's pair together: PartitionModulo 2 with PartitionRemainder 0 means the even
	// partitions whatever the Subscriber's filter. PartitionRemainder must be below
	// PartitionModulo: a remainder that is not is rejected by NewSubscriber, as for the Subscriber's pair. Optional; default PartitionModulo 0: the
	// Subscriber's PartitionModulo and PartitionRemainder; PartitionModulo 1 turns the
	// Subscriber's filter off for the topic (every partition).
	PartitionModulo, PartitionRemainder int
}

// topicSettings are what one subscription reads and leases with: the Subscriber's settings
// with the topic's TopicOptions applied.
type topicSettings struct {
	batch             int
	block             time.Duration
	modulo, remainder int
}

// settingsFor resolves the settings of a subscription to topic (the name as subscribed).
func (c *SubscriberConfig) settingsFor(topic string) topicSettings {
	s := topicSettings{batch: c.BatchCount, block: c.BlockTime, modulo: c.PartitionModulo, remainder: c.PartitionRemainder}
	o, ok := c.Topics[topic]
	if !ok {
		return s
	}
	setDefault(&o.BatchCount, s.batch)
	setDefault(&o.BlockTime, s.block)
	if o.PartitionModulo == 0 {
		o.PartitionModulo, o.PartitionRemainder = s.modulo, s.remainder
	}
	return topicSettings{batch: o.BatchCount, block: o.BlockTime, modulo: o.PartitionModulo, remainder: o.PartitionRemainder}
}

// cloneTopics copies Topics, so the caller changing its map later changes nothing.
func (c *SubscriberConfig) cloneTopics() {
	if c.Topics != nil {
		c.Topics = maps.Clone(c.Topics)
	}
}

// checkTopics checks every entry of Topics: a topic name Subscribe accepts (a DLQTopic
// too), fields that are not negative, a valid filter, and a BlockTime the leases allow.
func (c SubscriberConfig) checkTopics() error {
	var errs []error
	for name, o := range c.Topics {
		if _, err := newView(keys.Space{}, name); err != nil {
			errs = append(errs, fmt.Errorf("SubscriberConfig.Topics: %w", err))
			continue
		}
		errs = append(errs, checkTopic(name, o, c.settingsFor(name), c.LeaseTTL-c.RenewInterval))
	}
	return errors.Join(errs...)
}

func checkTopic(name string, o TopicOptions, s topicSettings, maxBlock time.Duration) error {
	var errs []error
	if o.BatchCount < 0 || o.BlockTime < 0 {
		errs = append(errs, fmt.Errorf("BatchCount and BlockTime must not be negative, got %d and %s", o.BatchCount, o.BlockTime))
	}
	if o.PartitionModulo != 0 || o.PartitionRemainder != 0 {
		errs = append(errs, checkFilter(o.PartitionModulo, o.PartitionRemainder))
	}
	if o.BlockTime > 0 && maxBlock > 0 && s.block >= maxBlock {
		errs = append(errs, fmt.Errorf("BlockTime %s must be less than LeaseTTL - RenewInterval (%s)", s.block, maxBlock))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("SubscriberConfig.Topics[%q]: %w", name, err)
	}
	return nil
}
