package streamq

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/streamq-dev/streamq/internal/keys"
)

const (
	defaultBatchCount = 50
	defaultBlockTime  = 100 * time.Millisecond
)

// ReadConfig is how a subscription reads its partitions: SubscriberConfig.Read for every
// topic, and SubscriberConfig.Topics per topic (there a zero field keeps Read's).
type ReadConfig struct {
	// BatchCount is the COUNT of one XREADGROUP per partition: the most entries one read
	// returns for a partition, and the prefetch bound. Default 50.
	BatchCount int
	// BlockTime is how long one XREADGROUP blocks. It also bounds how long a newly owned
	// partition waits for its first read. Default 100ms. It must be less than
	// Membership.LeaseTTL - Membership.RenewInterval.
	BlockTime time.Duration
	// PartitionModulo and PartitionRemainder restrict this member to the partitions i with
	// i % PartitionModulo == PartitionRemainder; the remainder must be below the modulo.
	// Default 0: every partition. In a Topics entry the pair replaces Read's together
	// (PartitionModulo 1 there turns Read's filter off for the topic).
	PartitionModulo, PartitionRemainder int
}

func (r *ReadConfig) setDefaults() {
	setDefault(&r.BatchCount, defaultBatchCount)
	setDefault(&r.BlockTime, defaultBlockTime)
}

// validate checks a ReadConfig after setDefaults, its fields named under path.
func (r ReadConfig) validate(path string, m MembershipConfig) error {
	errs := []error{positive(path+".BatchCount", r.BatchCount), durationPositive(path+".BlockTime", r.BlockTime),
		checkFilter(path, r.PartitionModulo, r.PartitionRemainder), checkBlock(path, r.BlockTime, m)}
	return errors.Join(errs...)
}

// checkBlock: the fetcher does not read for a partition whose lease may lapse before the read
// returns: with so long a block it would skip reads for part of every renewal cycle.
func checkBlock(path string, block time.Duration, m MembershipConfig) error {
	if limit := m.LeaseTTL - m.RenewInterval; limit > 0 && block >= limit {
		return fmt.Errorf("%s.BlockTime %s must be less than Membership.LeaseTTL - Membership.RenewInterval (%s)", path, block, limit)
	}
	return nil
}

func checkFilter(path string, mod, rem int) error {
	switch {
	case mod < 0 || rem < 0:
		return fmt.Errorf("%s.PartitionModulo and PartitionRemainder must not be negative, got %d and %d", path, mod, rem)
	case mod == 0 && rem != 0:
		return fmt.Errorf("%s.PartitionRemainder %d needs a PartitionModulo", path, rem)
	case mod > 0 && rem >= mod:
		return fmt.Errorf("%s.PartitionRemainder %d must be below PartitionModulo %d", path, rem, mod)
	}
	return nil
}

// readFor is the ReadConfig of a subscription to topic (the name as subscribed): Read with
// the topic's Topics entry applied.
func (c *SubscriberConfig) readFor(topic string) ReadConfig {
	r := c.Read
	o, ok := c.Topics[topic]
	if !ok {
		return r
	}
	setDefault(&o.BatchCount, r.BatchCount)
	setDefault(&o.BlockTime, r.BlockTime)
	if o.PartitionModulo == 0 {
		o.PartitionModulo, o.PartitionRemainder = r.PartitionModulo, r.PartitionRemainder
	}
	return o
}

// cloneTopics copies Topics, so the caller changing its map later changes nothing.
func (c *SubscriberConfig) cloneTopics() {
	if c.Topics != nil {
		c.Topics = maps.Clone(c.Topics)
	}
}

// checkTopics checks every entry of Topics, in the order of the topics' names: a topic name
// Subscribe accepts (a DLQTopic too), and the entry as Read is checked once applied.
func (c SubscriberConfig) checkTopics() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Topics)) {
		path := fmt.Sprintf("Topics[%q]", name)
		if _, err := (keys.Space{}).NewView(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		o := c.Topics[name]
		if o.BatchCount < 0 || o.BlockTime < 0 {
			errs = append(errs, fmt.Errorf("%s.BatchCount and BlockTime must not be negative, got %d and %s", path, o.BatchCount, o.BlockTime))
			continue
		}
		if err := checkFilter(path, o.PartitionModulo, o.PartitionRemainder); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, c.readFor(name).validate(path, c.Membership))
	}
	return errors.Join(errs...)
}
