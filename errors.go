package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/server"
)

var (
	// ErrPublisherClosed is returned by Publish after Close.
	ErrPublisherClosed = errors.New("publisher is closed")
	// ErrSubscriberClosed is returned by Subscribe after Close.
	ErrSubscriberClosed = errors.New("subscriber is closed")
	// ErrInvalidName reports a topic, group or consumer name that would break the key layout
	// (empty, braces, spaces or control characters).
	ErrInvalidName = keys.ErrInvalidName
	// ErrPartitionOutOfRange reports an x-force-partition-id outside the topic's partitions.
	ErrPartitionOutOfRange = errors.New("partition out of range")
	// ErrReservedMetadata reports a message whose metadata uses a key the marshaler reserves.
	ErrReservedMetadata = codec.ErrReserved
	// ErrMalformedEntry reports a stream entry that cannot be decoded into a message.
	ErrMalformedEntry = codec.ErrMalformed
	// ErrLeaseLost reports that this member no longer owns a partition's lease: another member
	// has taken the partition over and this one stopped delivering from it.
	ErrLeaseLost = fence.ErrLeaseLost
	// ErrUnsupportedServer reports a Redis server older than MinRedisVersion. The first
	// Publish and Subscribe on a client check every server behind it and return it, wrapped
	// with the version found, the server and the version needed.
	ErrUnsupportedServer = server.ErrUnsupported
	// ErrNotReplicated reports a Publish under PublisherConfig.MinReplicas whose writes fewer
	// replicas confirmed than asked within ReplicaTimeout (a *ReplicationError carries the
	// counts), or whose WAIT failed. The messages were written to the master: they exist and
	// will be delivered unless the master is lost before a replica has them. Publishing them
	// again is safe under at-least-once delivery but may deliver them twice.
	ErrNotReplicated = errors.New("not replicated")
	// ErrConsumerNameInUse is returned by Subscribe of a static member (StaticMemberGrace)
	// whose ConsumerName another live process holds in the group on the topic: that process
	// heartbeated while this one waited for it to be gone. The error names the consumer, the
	// group and the topic. This process leased nothing.
	ErrConsumerNameInUse = errors.New("consumer name in use by another live process")
)

// ReplicationError is the ErrNotReplicated of a pipeline that fewer replicas than MinReplicas
// confirmed within ReplicaTimeout.
type ReplicationError struct {
	Wanted  int           // PublisherConfig.MinReplicas
	Acked   int           // replicas that confirmed every write of the pipeline (WAIT's reply)
	Timeout time.Duration // PublisherConfig.ReplicaTimeout
}

func (e *ReplicationError) Error() string {
	return fmt.Sprintf("%v: %d of %d replicas confirmed the writes within %s (the messages were written to the master and may be delivered)",
		ErrNotReplicated, e.Acked, e.Wanted, e.Timeout)
}

// Unwrap returns ErrNotReplicated.
func (e *ReplicationError) Unwrap() error { return ErrNotReplicated }

// PartitionError carries the topic and partition of a failure.
type PartitionError struct {
	Topic     string
	Partition int
	Err       error
}

func (e *PartitionError) Error() string {
	return fmt.Sprintf("topic %q partition %d: %v", e.Topic, e.Partition, e.Err)
}

// Unwrap returns the underlying error.
func (e *PartitionError) Unwrap() error { return e.Err }
