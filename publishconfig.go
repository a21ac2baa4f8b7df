package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/server"
)

const (
	defaultPayloadThreshold = 64 * 1024
	defaultMaxPipelineSize  = 1000
	defaultFlushers         = 2
	defaultQueueSize        = 4096
	defaultReplicaTimeout   = time.Second
)

// PayloadConfig is how large payloads are stored: in a key of their own in the partition's
// slot, the entry referring to it, so that Redis streams stay small. A Publisher offloads
// the payloads it publishes; a Subscriber the payloads of the dead letters it replays (set
// the same on both).
type PayloadConfig struct {
	// Threshold: payloads larger than this many bytes are offloaded. Default 64 KiB; -1:
	// never (payloads inline).
	Threshold int
	// TTL caps the lifetime of an offloaded payload. Default 0: it lives until every group
	// acked its entry, or the entry is gone.
	TTL time.Duration
}

func (p *PayloadConfig) setDefaults() { setDefault(&p.Threshold, defaultPayloadThreshold) }

func (p PayloadConfig) validate() error {
	var errs []error
	if p.Threshold < -1 {
		errs = append(errs, fmt.Errorf("Payloads.Threshold must be > 0, 0 (default) or -1 (off), got %d", p.Threshold))
	}
	if p.TTL < 0 {
		errs = append(errs, fmt.Errorf("Payloads.TTL must not be negative, got %s", p.TTL))
	}
	return errors.Join(errs...)
}

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

// PipelineConfig is how concurrent Publish calls share pipelines: the writes of the calls
// waiting when a pipeline is sent go in it (one call is never split).
type PipelineConfig struct {
	// MaxSize caps the writes of one pipeline. Default 1000.
	MaxSize int
	// Flushers is how many pipelines may be in flight at once. Default 2.
	Flushers int
	// QueueSize bounds the Publish calls waiting for a pipeline; callers beyond it wait.
	// Default 4096.
	QueueSize int
}

func (p *PipelineConfig) setDefaults() {
	setDefault(&p.MaxSize, defaultMaxPipelineSize)
	setDefault(&p.Flushers, defaultFlushers)
	setDefault(&p.QueueSize, defaultQueueSize)
}

func (p PipelineConfig) validate() error {
	return errors.Join(positive("Pipeline.MaxSize", p.MaxSize), positive("Pipeline.Flushers", p.Flushers),
		positive("Pipeline.QueueSize", p.QueueSize))
}

// ReplicationConfig makes Publish wait for replicas: every pipeline ends with one WAIT, and
// Publish returns nil once MinReplicas replicas confirmed its writes, else a
// *ReplicationError (ErrNotReplicated). Single-node or Sentinel clients only. See
// docs/publishing.md, Durable publish.
type ReplicationConfig struct {
	// MinReplicas is how many replicas must confirm each pipeline. Default 0: off, Publish
	// returns once the master applied the writes.
	MinReplicas int
	// Timeout bounds the wait (WAIT's timeout). It must be at least 1ms and at most half the
	// client's ReadTimeout. Default 1s when MinReplicas is set.
	Timeout time.Duration
}

func (r *ReplicationConfig) setDefaults() {
	if r.MinReplicas > 0 {
		setDefault(&r.Timeout, defaultReplicaTimeout)
	}
}

// validate checks MinReplicas and Timeout against each other and the client. WAIT counts the
// replicas of the node that served the connection it is sent on, after the writes sent
// before it there. A single-node pipeline is one connection; go-redis splits a Cluster (or
// Ring) pipeline by the keys' slots and sends a keyless WAIT to any node, so MinReplicas is
// refused there rather than answered by the wrong node.
func (r ReplicationConfig) validate(c redis.UniversalClient) error {
	switch {
	case r.MinReplicas < 0:
		return fmt.Errorf("Replication.MinReplicas must not be negative, got %d", r.MinReplicas)
	case r.Timeout < 0:
		return fmt.Errorf("Replication.Timeout must not be negative, got %s", r.Timeout)
	case r.MinReplicas == 0 && r.Timeout > 0:
		return fmt.Errorf("Replication.Timeout %s needs Replication.MinReplicas", r.Timeout)
	case r.MinReplicas == 0 || c == nil || server.IsNil(c):
		return nil
	case r.Timeout < time.Millisecond:
		return fmt.Errorf("Replication.Timeout must be at least 1ms (WAIT counts milliseconds; WAIT 0 blocks for ever), got %s", r.Timeout)
	}
	if server.Sharded(c) {
		return fmt.Errorf("Replication.MinReplicas needs a single-node or Sentinel (failover) client, not a %T: "+
			"go-redis sends a keyless WAIT in a cluster pipeline to any node, not to the masters that took the writes", c)
	}
	if rt, ok := server.ReadTimeout(c); ok && rt > 0 && r.Timeout > rt/2 {
		return fmt.Errorf("Replication.Timeout %s must be at most half the client's ReadTimeout %s: "+
			"go-redis reads a pipeline's replies, WAIT's included, within ReadTimeout and sends a timed-out pipeline again", r.Timeout, rt)
	}
	return nil
}
