package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/server"
)

// defaultConsumerGroup is the group of a Subscriber whose ConsumerGroup is empty.
const defaultConsumerGroup = "default-group"

// MinRedisVersion is the oldest Redis streamq runs on. The first Publish and Subscribe on a
// client return ErrUnsupportedServer for an older server. Redis 6.2 has the commands streamq
// sends but not all of what it relies on: since 7.0, XAUTOCLAIM and XCLAIM drop from the
// pending list entries deleted from the stream (on 6.2 they would stay pending for ever), and
// XINFO GROUPS reports entries-read and lag, which the admin package reads (on 6.2 every group
// would report lag 0).
const MinRedisVersion = "7.0.0"

// ErrInvalidConfig wraps every configuration error returned by NewPublisher and NewSubscriber.
var ErrInvalidConfig = errors.New("invalid config")

// PartitionKeyMetadata is the metadata key read by the default PartitionKey.
const PartitionKeyMetadata = "partition_key"

// PublisherConfig configures a Publisher. Every field is optional but Client; a zero field,
// or a zero field of a group, means its default. docs/configuration.md lists every field
// with its default.
type PublisherConfig struct {
	// Client is the Redis client: single node, Cluster or Sentinel. Required. Close does not
	// close it.
	Client redis.UniversalClient
	// Keyspace names the keys; it must match the Subscribers' and admin's.
	Keyspace Keyspace
	// DefaultPartitionCount states the partition count of the topics this Publisher creates
	// by its first publish. Default 0: not stated, and a topic nobody created yet gets 1
	// partition. An existing topic keeps its count: a stated count that differs is logged
	// once per topic (grow a topic with admin.GrowPartitions or `streamq partitions grow`).
	DefaultPartitionCount int
	// Marshaler turns messages into stream entries. Default DefaultMarshaler.
	Marshaler Marshaler
	// Partitioning picks each message's partition.
	Partitioning PartitioningConfig
	// Trim is the topic's length retention, recorded for its lease holders too.
	Trim TrimConfig
	// Payloads offloads large payloads to keys of their own.
	Payloads PayloadConfig
	// Idempotency appends each message at most once, whatever go-redis, streamq or the
	// caller sends again.
	Idempotency IdempotencyConfig
	// Pipeline batches concurrent Publish calls into pipelines.
	Pipeline PipelineConfig
	// Replication makes Publish wait for replicas.
	Replication ReplicationConfig
	// Metrics receives the Produced counter. Default NoopMetrics.
	Metrics MetricsCollector
	// Tracer starts a span for each published message and writes its trace context into the
	// message's metadata (streamqotel.New for OpenTelemetry). Default nil: off.
	Tracer Tracer
	// Memory watches Redis's memory: a warning at the high-water mark, ErrRedisFull at
	// maxmemory.
	Memory MemoryWatch
}

func (c *PublisherConfig) setDefaults() {
	c.Keyspace.setDefaults()
	c.Partitioning.setDefaults()
	c.Trim.setDefaults()
	c.Payloads.setDefaults()
	c.Pipeline.setDefaults()
	c.Replication.setDefaults()
	c.Memory.setDefaults()
	c.Idempotency.setDefaults()
	if c.Marshaler == nil {
		c.Marshaler = DefaultMarshaler{}
	}
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
}

// Validate reports every invalid field, each naming its path (Trim.MaxLen), in the order of
// the fields, wrapped in ErrInvalidConfig.
func (c PublisherConfig) Validate() error {
	errs := []error{
		checkClient(c.Client),
		c.Keyspace.validate(),
		notNegative("DefaultPartitionCount", c.DefaultPartitionCount),
		c.Partitioning.validate(),
		c.Trim.validate(),
		c.Payloads.validate(),
		c.Idempotency.validate(),
		c.Pipeline.validate(),
		c.Replication.validate(c.Client),
		c.Memory.validate(),
	}
	return wrapConfig(errs)
}

// MetadataPartitionKey is the default PartitionKey: the "partition_key" metadata.
func MetadataPartitionKey(_ string, msg *message.Message) string {
	return msg.Metadata.Get(PartitionKeyMetadata)
}

// SubscriberConfig configures a Subscriber. Every field is optional but Client; a zero field,
// or a zero field of a group, means its default. docs/configuration.md lists every field
// with its default.
type SubscriberConfig struct {
	// Client is the Redis client: single node, Cluster or Sentinel. Required. Close does not
	// close it. Each Subscribe keeps one connection in a blocking read (one per owned
	// partition on a Cluster client), so size PoolSize accordingly.
	Client redis.UniversalClient
	// Keyspace names the keys; it must match the Publishers' and admin's.
	Keyspace Keyspace
	// ConsumerGroup is the Redis consumer group; members of one group share the partitions.
	// Default "default-group".
	ConsumerGroup string
	// DefaultPartitionCount states the partition count of a topic that Subscribe or
	// SubscribeInitialize finds missing: it creates the topic with it. Default 0: not
	// stated, and a missing topic is not created: Subscribe returns at once, waits for the
	// topic to appear (created by a publisher or an operator; checked every
	// Membership.RebalanceInterval), then creates its group on every partition at
	// Membership.GroupStartID. An existing topic keeps its count: a stated count that
	// differs is logged once per topic.
	DefaultPartitionCount int
	// Unmarshaler turns stream entries into messages. Default DefaultMarshaler.
	Unmarshaler Unmarshaler
	// Marshaler writes retries of nacked messages. Default DefaultMarshaler. Dead letters are
	// always written in DefaultMarshaler's format, so DLQ tools can read them.
	Marshaler Marshaler
	// Membership is how this member joins its group and holds partitions.
	Membership MembershipConfig
	// Read is how partitions are read.
	Read ReadConfig
	// Topics overrides Read for the subscriptions to some topics, keyed by the topic name as
	// subscribed (DLQTopic names too); a zero field of an override keeps Read's. It applies
	// to every Subscribe of the topic, the Router's included. NewSubscriber copies the map.
	Topics map[string]ReadConfig
	// Reclaim is how orphaned pending entries are claimed.
	Reclaim ReclaimConfig
	// Delivery is how many messages are handed out at once, and in what order.
	Delivery DeliveryConfig
	// Acks is how acknowledgements are flushed, and what they delete.
	Acks AckConfig
	// Retry is how often and how late a nacked message is handled again.
	Retry RetryConfig
	// Retention is what the lease holders trim from their partitions and DLQs.
	Retention RetentionConfig
	// Payloads stores large payloads of replayed dead letters in keys of their own.
	Payloads PayloadConfig
	// Metrics receives consumption metrics. Default NoopMetrics.
	Metrics MetricsCollector
	// Tracer starts a span for each delivery, a child of the trace context in the message's
	// metadata and the parent of msg.Context(), and one for each retry, dead letter, replay
	// and drop (streamqotel.New for OpenTelemetry). Default nil: off.
	Tracer Tracer
	// Memory watches Redis's memory: a warning at the high-water mark; above it, retention
	// trims every entry every group acked, so that a drained backlog frees room.
	Memory MemoryWatch
}

func (c *SubscriberConfig) setDefaults() {
	c.cloneTopics()
	c.Keyspace.setDefaults()
	setDefault(&c.ConsumerGroup, defaultConsumerGroup)
	if c.Unmarshaler == nil {
		c.Unmarshaler = DefaultMarshaler{}
	}
	if c.Marshaler == nil {
		c.Marshaler = DefaultMarshaler{}
	}
	c.Membership.setDefaults()
	c.Read.setDefaults()
	c.Reclaim.setDefaults()
	c.Delivery.setDefaults()
	c.Acks.setDefaults()
	c.Retry.setDefaults()
	c.Retention.setDefaults()
	c.Payloads.setDefaults()
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
	c.Memory.setDefaults()
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate reports every invalid field, each naming its path (Membership.LeaseTTL), in the
// order of the fields, wrapped in ErrInvalidConfig.
func (c SubscriberConfig) Validate() error {
	errs := []error{
		checkClient(c.Client),
		c.Keyspace.validate(),
		keys.ValidateName("ConsumerGroup", c.ConsumerGroup),
		notNegative("DefaultPartitionCount", c.DefaultPartitionCount),
		c.Membership.validate(),
		c.Read.validate("Read", c.Membership),
		c.checkTopics(),
		c.Reclaim.validate(),
		c.Delivery.validate(),
		c.Acks.validate(),
		c.Retry.validate(),
		c.Retention.validate(),
		c.Payloads.validate(),
		c.Memory.validate(),
	}
	return wrapConfig(errs)
}

func checkClient(c redis.UniversalClient) error {
	if c == nil {
		return errors.New("Client is required")
	}
	if server.IsNil(c) {
		return fmt.Errorf("Client is a nil %T: pass a client made by redis.NewClient, NewClusterClient, NewFailoverClient or NewUniversalClient", c)
	}
	return nil
}

func positive(name string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s must be positive, got %d", name, v)
	}
	return nil
}

func notNegative(name string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s must not be negative, got %d", name, v)
	}
	return nil
}

func durationPositive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %s", name, d)
	}
	return nil
}

// wrapConfig joins errs (nils dropped) under ErrInvalidConfig: every error at once, one per
// line, in the order given.
func wrapConfig(errs []error) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// newConsumerName is a generated ConsumerName: the prefix and a random suffix.
func newConsumerName(prefix string) string { return prefix + watermill.NewShortUUID() }
