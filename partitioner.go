package streamq

import (
	"math/rand/v2"

	"github.com/streamq-dev/streamq/internal/publish"
)

// Partitioner picks the partition of a message from its key. Implementations must be safe
// for concurrent use and return a value in [0, partitions).
type Partitioner interface {
	// Partition returns the partition for key among partitions (>= 1). key is "" when the
	// message has no partition key.
	Partition(key string, partitions int) int
}

// HashPartitioner is the default Partitioner. A key is hashed with murmur2 exactly like
// Kafka's default partitioner (toPositive(murmur2(key)) % partitions), so keyed traffic moved
// from a Kafka topic lands on the same partition numbers. Messages without a key go to a
// random partition.
type HashPartitioner struct{}

// Partition implements Partitioner.
func (HashPartitioner) Partition(key string, partitions int) int {
	if partitions <= 1 {
		return 0
	}
	if key == "" {
		return rand.IntN(partitions)
	}
	return publish.KafkaPartition([]byte(key), partitions)
}

// PartitionerFunc adapts a function to Partitioner.
type PartitionerFunc func(key string, partitions int) int

// Partition implements Partitioner.
func (f PartitionerFunc) Partition(key string, partitions int) int { return f(key, partitions) }
