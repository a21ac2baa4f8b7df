package streamq

import (
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// PartitioningConfig is how a Publisher picks each message's partition.
type PartitioningConfig struct {
	// Partitioner picks a partition from the key. Default HashPartitioner.
	Partitioner Partitioner
	// PartitionKey extracts the partition key. Default MetadataPartitionKey (metadata
	// "partition_key"). Under idempotent publish a message without a key is routed by its
	// UUID, so that a message sent again goes to the partition that knows it.
	PartitionKey func(topic string, msg *message.Message) string
	// RefreshInterval is how often a known topic's partition count is re-read, so a grown
	// topic is picked up. Default 30s.
	RefreshInterval time.Duration
}

func (p *PartitioningConfig) setDefaults() {
	if p.Partitioner == nil {
		p.Partitioner = HashPartitioner{}
	}
	if p.PartitionKey == nil {
		p.PartitionKey = MetadataPartitionKey
	}
	setDefault(&p.RefreshInterval, defaultPartitionRefreshInterval)
}

func (p PartitioningConfig) validate() error {
	return durationPositive("Partitioning.RefreshInterval", p.RefreshInterval)
}
