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

// Defaults of PublisherConfig and SubscriberConfig. A zero field means its default.
const (
	// DefaultStreamPrefix prefixes partition and DLQ stream keys.
	DefaultStreamPrefix = keys.DefaultStreamPrefix
	// DefaultControlPrefix prefixes leases, registry, membership and other control keys.
	DefaultControlPrefix = keys.DefaultControlPrefix
	// DefaultPartitionCount is the partition count of a topic whose first publisher stated
	// none: state a count on the Publisher, the Subscriber or with
	// admin.CreateTopic to get more.
	DefaultPartitionCount = 1
	// DefaultMaxLen is the length retention of each partition: about this many entries are
	// kept once every consumer group acked them (see TrimPolicy).
	DefaultMaxLen int64 = 100_000
	// DefaultMessageMaxRetries caps the retries of a message that carries no
	// MaxRetriesMetadata, below the RetryPolicy's cap.
	DefaultMessageMaxRetries = 3
	// DefaultPartitionRefreshInterval is how often a known topic's partition count is re-read.
	DefaultPartitionRefreshInterval = 30 * time.Second
	// DefaultConsumerGroup is the group used when SubscriberConfig.ConsumerGroup is empty.
	DefaultConsumerGroup = "default-group"
	// DefaultConsumerNamePrefix starts generated consumer names.
	DefaultConsumerNamePrefix = "streamq-"
	// DefaultBatchCount is the COUNT of one XREADGROUP per partition (the prefetch bound).
	DefaultBatchCount = 50
	// DefaultBlockTime is how long one XREADGROUP waits for new entries.
	DefaultBlockTime = 100 * time.Millisecond
	// DefaultLeaseTTL is the lifetime of a partition lease and of a membership heartbeat.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultRenewInterval is how often held leases are renewed.
	DefaultRenewInterval = 3 * time.Second
	// DefaultRebalanceInterval is how often a member heartbeats and recomputes its partitions.
	DefaultRebalanceInterval = 2 * time.Second
	// DefaultPendingScanInterval is how often owned partitions are scanned for orphaned
	// pending entries.
	DefaultPendingScanInterval = 30 * time.Second
	// DefaultClaimIdle is how long a pending entry must be idle before the scan claims it.
	DefaultClaimIdle = time.Minute
	// DefaultClaimBatchSize is the COUNT of one XAUTOCLAIM.
	DefaultClaimBatchSize = 100
	// DefaultMaxInFlightPerPartition keeps partitions ordered: one message at a time.
	DefaultMaxInFlightPerPartition = 1
	// DefaultAckBatchSize flushes acks of a partition when this many are waiting.
	DefaultAckBatchSize = 100
	// DefaultAckFlushInterval flushes waiting acks at least this often.
	DefaultAckFlushInterval = 20 * time.Millisecond
	// DefaultCloseTimeout bounds how long Close and a handover wait for in-flight messages.
	DefaultCloseTimeout = 5 * time.Second
	// DefaultGroupStartID makes a new group read a partition from its beginning.
	DefaultGroupStartID = "0-0"
	// DefaultRetryMoverInterval is the longest the mover of an owned partition waits before
	// looking at its retry and delay sets (it wakes sooner for retries it scheduled itself).
	DefaultRetryMoverInterval = time.Second
	// DefaultRetryMoverBatch is the most due items one mover step appends.
	DefaultRetryMoverBatch = 100
)

// AckDeletePolicy says what happens to a stream entry once it is acked.
type AckDeletePolicy string

// Ack-delete policies: what an ack does to the entry besides XACK.
const (
	// AckDeleteNone only acks (XACK): entries stay until retention trims them.
	AckDeleteNone AckDeletePolicy = "none"
	// AckDeleteImmediate deletes the entry once this group acks it (XACK then XDEL): for
	// topics read by a single group.
	AckDeleteImmediate AckDeletePolicy = "immediate"
	// AckDeleteAllGroups deletes the entry once every group registered on the stream, live or
	// not, has acked it.
	AckDeleteAllGroups AckDeletePolicy = "all-groups-ack"
)

// TrimPolicy says what retention (MaxLen, Retention) may remove.
type TrimPolicy string

// Trim policies.
const (
	// TrimAcked, the default, removes only entries that every consumer group registered on
	// the partition, live or not, has been delivered and acked (what Redis 8.2 calls ACKED
	// trimming). A group that never consumes holds retention back until it is deleted.
	TrimAcked TrimPolicy = "acked"
	// TrimHard applies MaxLen and Retention to unread entries too: a hard memory cap. Every
	// entry it removes before some group acked it is counted (Metrics.Trimmed with kind
	// "length-unacked" or "age-unacked", Subscriber.Stats().TrimmedUnacked, admin) and logged.
	TrimHard TrimPolicy = "hard"
)

// DefaultAckSetTTL bounds how long the set of groups that acked an entry is kept.
const DefaultAckSetTTL = 24 * time.Hour

// DefaultIdempotencyWindow is how long a Publisher remembers the UUIDs it appended.
const DefaultIdempotencyWindow = 2 * time.Minute

// DefaultPayloadThreshold is the payload size above which the Publisher offloads it (64 KiB).
const DefaultPayloadThreshold = 64 * 1024

// Publisher pipelining defaults.
const (
	DefaultMaxPipelineSize = 1000
	DefaultFlushers        = 2
	DefaultQueueSize       = 4096
)

// DefaultReplicaTimeout is how long a pipeline waits for PublisherConfig.MinReplicas replicas.
const DefaultReplicaTimeout = time.Second

// MinRedisVersion is the oldest Redis streamq runs on. The first Publish and Subscribe on a
// client return ErrUnsupportedServer for an older server. Redis 6.2 has the commands streamq
// sends but not all of what it relies on: since 7.0, XAUTOCLAIM and XCLAIM drop from the
// pending list entries deleted from the stream (on 6.2 they would stay pending for ever), and
// XINFO GROUPS reports entries-read and lag, which the admin package reads (on 6.2 every group
// would report lag 0).
const MinRedisVersion = "7.0.0"

// DefaultTrimInterval is how often the lease holders of a partition apply time retention.
const DefaultTrimInterval = time.Minute

// ErrInvalidConfig wraps every configuration error returned by NewPublisher and NewSubscriber.
var ErrInvalidConfig = errors.New("invalid config")

// PartitionKeyMetadata is the metadata key read by the default PartitionKey.
const PartitionKeyMetadata = "partition_key"

// PublisherConfig configures a Publisher.
type PublisherConfig struct {
	// Client is the Redis client: single node, Cluster or Sentinel. Required. Close does not
	// close it.
	Client redis.UniversalClient
	// Marshaler turns messages into stream entries. Optional; default DefaultMarshaler.
	Marshaler Marshaler
	// StreamPrefix prefixes stream keys. Optional; default DefaultStreamPrefix.
	StreamPrefix string
	// ControlPrefix prefixes control keys. Optional; default DefaultControlPrefix.
	ControlPrefix string
	// DefaultPartitionCount states the partition count of the topics this Publisher creates
	// by its first publish. Optional; default 0: not stated, and a topic nobody created yet
	// gets DefaultPartitionCount (1). An existing topic keeps its count: a stated count that
	// differs is logged once per topic (grow a topic with admin.GrowPartitions or `streamq
	// partitions grow`).
	DefaultPartitionCount int
	// Partitioner picks a partition from the key. Optional; default HashPartitioner.
	Partitioner Partitioner
	// PartitionKey extracts the partition key. Optional; default: metadata "partition_key".
	// Under IdempotencyWindow a message without a key is routed by its UUID, so that a
	// message sent again goes to the partition that knows it.
	PartitionKey func(topic string, msg *message.Message) string
	// MaxLen is the length retention of each partition: about this many entries are kept.
	// Under the default TrimAcked only entries every registered group has acked are removed,
	// so a partition grows past MaxLen while a group is behind and shrinks back when it
	// catches up. The Publisher trims in the background every MaxLen/100 appends (at most
	// 1000) to a partition, never on the append itself, and records MaxLen, ExactMaxLen and
	// TrimPolicy in the topic's metadata: the lease holders of the topic's partitions apply
	// them too, every TrimInterval, to every append (retries, delayed messages, replays).
	// Publishers of one topic should agree: the last one started is what the metadata holds.
	// Optional; default DefaultMaxLen; -1 disables length retention.
	MaxLen int64
	// GroupExpiry: a consumer group with no live member on a partition for this long no
	// longer holds back this Publisher's trims of it (see SubscriberConfig.GroupExpiry; set
	// the same on a topic's publishers and subscribers). Optional; default
	// DefaultGroupExpiry (7 days); -1: off, a group holds retention back for ever.
	GroupExpiry time.Duration
	// ExactMaxLen trims to exactly MaxLen entries. Optional; default false: whole macro nodes
	// only, up to about 100 entries more, which is cheaper.
	ExactMaxLen bool
	// TrimPolicy says whether MaxLen may remove entries a group has not acked. Optional;
	// default TrimAcked; TrimHard for a hard memory cap.
	TrimPolicy TrimPolicy
	// PartitionRefreshInterval is how often a known topic's partition count is re-read, so a
	// grown topic is picked up. Optional; default DefaultPartitionRefreshInterval.
	PartitionRefreshInterval time.Duration
	// PayloadThreshold: payloads larger than this many bytes are stored in their own key in
	// the partition's slot and the entry refers to it. Optional; default
	// DefaultPayloadThreshold (64 KiB); -1 disables offloading.
	PayloadThreshold int
	// Retention caps the lifetime of offloaded payloads (a TTL), matching the subscribers'
	// Retention. Optional; default 0: payloads live until every
	// group acked their entry, or the entry is gone.
	Retention time.Duration
	// IdempotencyWindow: a message is appended at most once to its partition within this
	// window, keyed by its UUID. A publish sent again (by go-redis after a lost reply, by
	// streamq, or by the caller publishing the same message again) appends nothing and
	// returns nil, and PublishedStreamID reports the first append's id. A UUID is
	// remembered for at least the window and at most one and a half. Memory: about 120 bytes
	// per message appended within that time. Optional; default DefaultIdempotencyWindow
	// (2 minutes); -1: off (plain XADD, about 2.5 times the publish rate Redis can take).
	IdempotencyWindow time.Duration
	// Metrics receives the Produced counter. Optional; default NoopMetrics.
	Metrics MetricsCollector
	// Tracer starts a span for each published message and writes its trace context into the
	// message's metadata (streamqotel.New for OpenTelemetry, see docs/observability.md, Tracing). Optional;
	// default nil: off, no hook is called and no trace metadata written.
	Tracer Tracer
	// MaxPipelineSize caps the writes of concurrent Publish calls sent in one pipeline (one
	// call is never split). Optional; default DefaultMaxPipelineSize.
	MaxPipelineSize int
	// Flushers is how many pipelines may be in flight at once. Optional; default
	// DefaultFlushers.
	Flushers int
	// QueueSize bounds the Publish calls waiting for a pipeline; callers beyond it wait.
	// Optional; default DefaultQueueSize.
	QueueSize int
	// MinReplicas makes Publish durable against losing the master: every pipeline of writes
	// ends with one WAIT (sent on the writes' connection), and Publish returns nil only once
	// this many replicas confirmed all of the pipeline's writes. Fewer within ReplicaTimeout,
	// and Publish returns a *ReplicationError (ErrNotReplicated): the messages were written to
	// the master and may be delivered. It needs a single-node or Sentinel (failover) client:
	// Validate rejects a Cluster or Ring client, whose pipelines send a keyless WAIT to any
	// node. Each pipeline then takes a replica round trip longer, and the Flushers pipelines
	// in flight bound the throughput (see docs/publishing.md, Durable publish). Optional; default 0: off,
	// Publish returns once the master applied the writes.
	MinReplicas int
	// ReplicaTimeout bounds the wait for MinReplicas replicas (WAIT's timeout), and with it how
	// long Publish may wait for a lagging or stalled replica. It must be at least 1ms and at
	// most half the client's ReadTimeout (go-redis reads a pipeline's replies, WAIT's included,
	// within ReadTimeout, and sends a pipeline that timed out again). Optional; default
	// DefaultReplicaTimeout (1 s); ignored when MinReplicas is 0.
	ReplicaTimeout time.Duration
	// Memory is how the Publisher watches Redis's memory: a warning at the high-water mark,
	// ErrRedisFull at maxmemory. Optional; see MemoryWatch for the defaults.
	Memory MemoryWatch
}

func (c *PublisherConfig) setDefaults() {
	c.Memory.setDefaults()
	if c.Marshaler == nil {
		c.Marshaler = DefaultMarshaler{}
	}
	setDefault(&c.TrimPolicy, TrimAcked)
	if c.Partitioner == nil {
		c.Partitioner = HashPartitioner{}
	}
	if c.PartitionKey == nil {
		c.PartitionKey = MetadataPartitionKey
	}
	if c.MaxLen == 0 {
		c.MaxLen = DefaultMaxLen
	}
	if c.PartitionRefreshInterval == 0 {
		c.PartitionRefreshInterval = DefaultPartitionRefreshInterval
	}
	if c.PayloadThreshold == 0 {
		c.PayloadThreshold = DefaultPayloadThreshold
	}
	setDefault(&c.IdempotencyWindow, DefaultIdempotencyWindow)
	setDefault(&c.GroupExpiry, DefaultGroupExpiry)
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
	setDefault(&c.MaxPipelineSize, DefaultMaxPipelineSize)
	setDefault(&c.Flushers, DefaultFlushers)
	setDefault(&c.QueueSize, DefaultQueueSize)
	if c.MinReplicas > 0 {
		setDefault(&c.ReplicaTimeout, DefaultReplicaTimeout)
	}
}

// Validate reports the first invalid field, wrapped in ErrInvalidConfig.
func (c PublisherConfig) Validate() error {
	errs := []error{
		checkClient(c.Client),
		checkPrefixes(c.StreamPrefix, c.ControlPrefix),
		notNegative("DefaultPartitionCount", c.DefaultPartitionCount),
		checkTrimPolicy(c.TrimPolicy),
		durationPositive("PartitionRefreshInterval", c.PartitionRefreshInterval),
		positive("MaxPipelineSize", c.MaxPipelineSize),
		positive("Flushers", c.Flushers),
		positive("QueueSize", c.QueueSize),
		checkReplicas(c.Client, c.MinReplicas, c.ReplicaTimeout),
		c.Memory.validate(),
		checkGroupExpiry(c.GroupExpiry, 0),
	}
	if c.MaxLen < -1 {
		errs = append(errs, fmt.Errorf("MaxLen must be > 0, 0 (default) or -1 (off), got %d", c.MaxLen))
	}
	errs = append(errs, checkPayloadThreshold(c.PayloadThreshold))
	if c.Retention < 0 {
		errs = append(errs, fmt.Errorf("Retention must not be negative, got %s", c.Retention))
	}
	if w := c.IdempotencyWindow; w != -1 && w < time.Millisecond {
		errs = append(errs, fmt.Errorf("IdempotencyWindow must be at least 1ms, 0 (default) or -1 (off), got %s", w))
	}
	return wrapConfig(errs)
}

// MetadataPartitionKey is the default PartitionKey: the "partition_key" metadata.
func MetadataPartitionKey(_ string, msg *message.Message) string {
	return msg.Metadata.Get(PartitionKeyMetadata)
}

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// Client is the Redis client: single node, Cluster or Sentinel. Required. Close does not
	// close it. Each Subscribe keeps one connection in a blocking read (one per owned
	// partition on a Cluster client), so size PoolSize accordingly.
	Client redis.UniversalClient
	// Unmarshaler turns stream entries into messages. Optional; default DefaultMarshaler.
	Unmarshaler Unmarshaler
	// Marshaler writes retries of nacked messages. Optional; default DefaultMarshaler.
	// Dead letters are always written in DefaultMarshaler's format, so DLQ tools can read them.
	Marshaler Marshaler
	// RetryPolicy decides the retries of nacked messages. Optional; default
	// DefaultRetryPolicy() (at most 5 retries, 1 s doubling to 60 s). Then the message goes
	// to the partition's dead-letter queue.
	RetryPolicy RetryPolicy
	// MessageMaxRetries caps the retries of a message that carries no MaxRetriesMetadata; the
	// RetryPolicy's MaxAttempts caps it too. Optional;
	// default DefaultMessageMaxRetries (3): a message is handled at most 4 times; -1: only
	// the RetryPolicy caps.
	MessageMaxRetries int
	// RetryMoverInterval is the longest an owned partition's mover waits before appending due
	// retries and delayed messages. Optional; default DefaultRetryMoverInterval.
	RetryMoverInterval time.Duration
	// RetryMoverBatch is the most due items appended in one step. Optional; default
	// DefaultRetryMoverBatch.
	RetryMoverBatch int
	// StreamPrefix prefixes stream keys. Optional; default DefaultStreamPrefix.
	StreamPrefix string
	// ControlPrefix prefixes control keys. Optional; default DefaultControlPrefix.
	ControlPrefix string
	// DefaultPartitionCount states the partition count of a topic that Subscribe or
	// SubscribeInitialize finds missing: it creates the topic with it. Optional; default 0:
	// not stated, and a missing topic is not created: Subscribe returns at once, waits for
	// the topic to appear (created by a publisher or an operator; checked every
	// RebalanceInterval), then creates its group on every partition at GroupStartID. An
	// existing topic keeps its count: a stated count that differs is logged once per topic.
	DefaultPartitionCount int
	// PartitionRefreshInterval is how often a subscription re-reads its topic's metadata
	// once it knows the topic: a grown topic's new partitions are joined, and the length
	// retention its publishers recorded is applied. Optional; default
	// DefaultPartitionRefreshInterval.
	PartitionRefreshInterval time.Duration
	// ConsumerGroup is the Redis consumer group; members of one group share the partitions.
	// Optional; default DefaultConsumerGroup.
	ConsumerGroup string
	// ConsumerName names this member in the group, the leases and XINFO. Optional; default
	// ConsumerNamePrefix + a random suffix. Must be unique among live members of the group.
	ConsumerName string
	// ConsumerNamePrefix starts the generated ConsumerName. Optional; default
	// DefaultConsumerNamePrefix.
	ConsumerNamePrefix string
	// GroupStartID is where a newly created group starts: "0-0" (backlog delivered) or "$"
	// (only new entries). Optional; default DefaultGroupStartID.
	GroupStartID string
	// BatchCount is the COUNT of one XREADGROUP per partition. Optional; default
	// DefaultBatchCount. Topics can override it per topic.
	BatchCount int
	// BlockTime is how long one XREADGROUP blocks. Optional; default DefaultBlockTime. It also
	// bounds how long a newly owned partition waits for its first read. Topics can override
	// it per topic.
	BlockTime time.Duration
	// LeaseTTL is the lifetime of a partition lease and of a membership heartbeat: a crashed
	// member's partitions are taken over after it. Optional; default DefaultLeaseTTL. Must
	// exceed RenewInterval and RebalanceInterval.
	LeaseTTL time.Duration
	// RenewInterval is how often held leases are renewed. Optional; default DefaultRenewInterval.
	RenewInterval time.Duration
	// StaticMemberGrace makes this member static (Kafka's group.instance.id): a member that
	// stops, by a crash or a Close, and starts again with the same ConsumerName within this
	// grace takes back the partitions it held at once, and the other members do not take them
	// meanwhile; one that stays away longer is replaced as any member (its leases expire
	// after the grace). A second live process with the same name is refused: its Subscribe
	// returns ErrConsumerNameInUse. It needs an explicit ConsumerName, stable across restarts
	// and unique to one process, and must be at least LeaseTTL. A static member's Close keeps
	// its partitions for the grace instead of handing them over (call Subscriber.LeaveOnClose
	// before closing one that will not come back). A static member renews its presence
	// (its hold on the name) three times per presence window, apart from its rebalance
	// rounds; the window is three quarters of RebalanceInterval (at least three BlockTimes
	// and 300ms, at most LeaseTTL). After a crash the next process waits until the dead one's
	// last renewal is one window old before it takes the name, and takes the partitions back
	// in its first rebalance round: it holds them within one RebalanceInterval of its start.
	// A process that cannot renew its presence for a window (frozen, cut off from Redis)
	// stops delivering, and takes its partitions back once Redis answers, if no other
	// process took its name meanwhile (raise RebalanceInterval to ride out longer silences).
	// See docs/consuming.md, Static membership and rolling restarts.
	// Optional; default 0: off (a Close hands the partitions over at once, a crashed member is
	// replaced after LeaseTTL).
	StaticMemberGrace time.Duration
	// RebalanceInterval is how often this member heartbeats and recomputes its partitions.
	// Optional; default DefaultRebalanceInterval.
	RebalanceInterval time.Duration
	// PendingScanInterval is how often owned partitions are scanned for pending entries idle
	// longer than ClaimIdle (a safety net: a new owner claims a partition's pending entries at
	// once). Optional; default DefaultPendingScanInterval.
	PendingScanInterval time.Duration
	// ClaimIdle is the idle time after which the scan claims a pending entry. Optional;
	// default DefaultClaimIdle.
	ClaimIdle time.Duration
	// ClaimBatchSize is the COUNT of one XAUTOCLAIM. Optional; default DefaultClaimBatchSize.
	ClaimBatchSize int
	// MaxLeasedPartitions caps the partitions this Subscriber leases over all its
	// subscriptions (every topic and DLQ topic it subscribed to). Each rebalance round a subscription may hold the cap
	// minus what the Subscriber's other subscriptions hold (leases being taken or handed over
	// count), and tells its group so: the assignment gives the rest of the topic to other
	// members. First come, first served: a subscription that filled the cap keeps it, and the
	// others lease what it gives back (meanwhile their topics are served by other members of
	// their groups, or wait). Optional; default 0: no cap.
	MaxLeasedPartitions int
	// MaxInFlightPerPartition is how many messages of one partition may be unacked at once.
	// Optional; default 1 (ordered). Above 1, order within a partition is not kept, unless
	// OrderByKey.
	MaxInFlightPerPartition int
	// OrderByKey keeps order per partition key instead of per partition: up to
	// MaxInFlightPerPartition handlers of a partition run at once, and the messages of one
	// key are handled one after another, in stream order. A message nacked into a retry
	// holds back the later messages of its key until the retry is settled; other keys go
	// on. Messages without a key are independent. Optional; default false.
	OrderByKey bool
	// PartitionKey is the key OrderByKey orders by. Optional; default MetadataPartitionKey
	// (the Publisher's default): metadata "partition_key".
	PartitionKey func(topic string, msg *message.Message) string
	// MaxInFlight caps unacked messages across every subscription of this Subscriber: a partition with a message ready waits for a slot,
	// and the wait is recorded by MetricsCollector.BackpressureWait. Optional; default 0: no
	// cap beyond MaxInFlightPerPartition.
	MaxInFlight int
	// PartitionModulo and PartitionRemainder restrict this member to partitions i with
	// i % PartitionModulo == PartitionRemainder. PartitionRemainder must be below
	// PartitionModulo: NewSubscriber rejects a remainder that is not (a remainder at or above
	// the modulo is most likely a mistake, and taking it modulo would silently lease other
	// partitions than the ones written). Optional; default
	// 0: every partition. Topics can override the pair per topic.
	PartitionModulo, PartitionRemainder int
	// Topics overrides BatchCount, BlockTime, PartitionModulo and PartitionRemainder for the
	// subscriptions to some topics, keyed by the topic name as subscribed (DLQTopic names
	// too). It applies to every Subscribe of the topic, the Router's included. Optional;
	// default nil: every topic uses the fields above. NewSubscriber copies the map.
	Topics map[string]TopicOptions
	// AckBatchSize flushes a partition's acks when this many wait. Optional; default
	// DefaultAckBatchSize.
	AckBatchSize int
	// AckFlushInterval flushes waiting acks at least this often. Optional; default
	// DefaultAckFlushInterval.
	AckFlushInterval time.Duration
	// CloseTimeout bounds how long Close and a partition handover wait for in-flight messages
	// to be acked or nacked. Optional; default DefaultCloseTimeout.
	CloseTimeout time.Duration
	// AckDeletePolicy: what an ack does to the entry. Optional; default AckDeleteNone.
	AckDeletePolicy AckDeletePolicy
	// AckSetTTL bounds how long the set of groups that acked an entry is kept (used by
	// AckDeleteAllGroups and offloaded payloads). Optional; default DefaultAckSetTTL.
	AckSetTTL time.Duration
	// Retention removes entries older than this from owned partitions every TrimInterval
	// (XTRIM MINID). Under the default TrimPolicy it stops at the
	// oldest entry some registered group has not been delivered and acked. Optional; default
	// 0: off (the length retention the topic's publishers recorded still applies).
	Retention time.Duration
	// TrimPolicy says whether Retention may remove entries a group has not acked. Optional;
	// default TrimAcked; TrimHard removes them all the same, counting and logging each.
	TrimPolicy TrimPolicy
	// SafeRetention is kept for compatibility and has no effect: time retention never
	// removes an entry some group has not acked unless TrimPolicy is TrimHard.
	//
	// Deprecated: the safe behaviour is the default; set TrimPolicy to TrimHard for the old one.
	SafeRetention bool
	// GroupExpiry: a consumer group with no live member on a partition for this long (no
	// member held its lease there) stops holding back retention of that partition, so a
	// forgotten group cannot fill Redis. The lease holders of every group record it live
	// every TrimInterval; a trim that finds a group silent for longer logs it once and counts
	// it (GroupExpiryReporter), removes what the rule asks for all the same, and counts per
	// group what it removed before the expired group acked it, as TrimHard does. The group's
	// offsets stay: when a member comes back it holds retention back again, gets the entries
	// still there, and is told what it lost (Stats().TrimmedUnacked, Metrics.Trimmed
	// "unacked", admin's TrimLost). admin shows the group as expired. Set the same on a
	// topic's publishers and subscribers. Optional; default DefaultGroupExpiry (7 days, as
	// Kafka's offsets retention); -1: off, a group holds retention back for ever. Must be
	// at least 1s and twice TrimInterval.
	GroupExpiry time.Duration
	// DLQRetention removes dead letters older than this. Optional; default 0: off.
	DLQRetention time.Duration
	// DLQRetentionMaxLen keeps at most this many dead letters per partition. Optional;
	// default 0: off.
	DLQRetentionMaxLen int64
	// TrimInterval is how often the lease holders apply Retention, the topic's length
	// retention, DLQ retention and remove orphaned payloads. Optional; default
	// DefaultTrimInterval.
	TrimInterval time.Duration
	// PayloadThreshold: a dead letter that a DLQ handler replays (Replay, ReplayToAllGroups)
	// has its payload stored in its own key again when it is larger than this many bytes, as
	// the Publisher stores it; the key's TTL is Retention when set. Set it to the Publisher's
	// PayloadThreshold. Optional; default DefaultPayloadThreshold (64 KiB); -1: replay
	// payloads inline.
	PayloadThreshold int
	// Metrics receives consumption metrics. Optional; default NoopMetrics.
	Metrics MetricsCollector
	// Tracer starts a span for each delivery, a child of the trace context in the message's
	// metadata and the parent of msg.Context(), and one for each retry, dead letter, replay
	// and drop (streamqotel.New for OpenTelemetry, see docs/observability.md, Tracing). Optional; default
	// nil: off, no hook is called and no trace metadata written.
	Tracer Tracer
	// Memory is how the Subscriber watches Redis's memory: a warning at the high-water mark;
	// above it, retention trims every entry every group acked, so that a drained backlog
	// frees room for publishes. Optional; see MemoryWatch for the defaults.
	Memory MemoryWatch

	generatedName bool // ConsumerName was generated by setDefaults
}

func (c *SubscriberConfig) setDefaults() {
	c.cloneTopics()
	c.Memory.setDefaults()
	if c.Unmarshaler == nil {
		c.Unmarshaler = DefaultMarshaler{}
	}
	if c.Marshaler == nil {
		c.Marshaler = DefaultMarshaler{}
	}
	if c.RetryPolicy == nil {
		c.RetryPolicy = DefaultRetryPolicy()
	}
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
	setDefault(&c.RetryMoverInterval, DefaultRetryMoverInterval)
	setDefault(&c.PayloadThreshold, DefaultPayloadThreshold)
	if c.PartitionKey == nil {
		c.PartitionKey = MetadataPartitionKey
	}
	setDefault(&c.AckDeletePolicy, AckDeleteNone)
	setDefault(&c.AckSetTTL, DefaultAckSetTTL)
	setDefault(&c.TrimInterval, DefaultTrimInterval)
	setDefault(&c.GroupExpiry, DefaultGroupExpiry)
	setDefault(&c.RetryMoverBatch, DefaultRetryMoverBatch)
	setDefault(&c.TrimPolicy, TrimAcked)
	setDefault(&c.MessageMaxRetries, DefaultMessageMaxRetries)
	setDefault(&c.PartitionRefreshInterval, DefaultPartitionRefreshInterval)
	setDefault(&c.ConsumerGroup, DefaultConsumerGroup)
	setDefault(&c.ConsumerNamePrefix, DefaultConsumerNamePrefix)
	if c.ConsumerName == "" {
		c.ConsumerName, c.generatedName = c.ConsumerNamePrefix+watermill.NewShortUUID(), true
	}
	setDefault(&c.GroupStartID, DefaultGroupStartID)
	setDefault(&c.BatchCount, DefaultBatchCount)
	setDefault(&c.BlockTime, DefaultBlockTime)
	setDefault(&c.LeaseTTL, DefaultLeaseTTL)
	setDefault(&c.RenewInterval, DefaultRenewInterval)
	setDefault(&c.RebalanceInterval, DefaultRebalanceInterval)
	setDefault(&c.PendingScanInterval, DefaultPendingScanInterval)
	setDefault(&c.ClaimIdle, DefaultClaimIdle)
	setDefault(&c.ClaimBatchSize, DefaultClaimBatchSize)
	setDefault(&c.MaxInFlightPerPartition, DefaultMaxInFlightPerPartition)
	setDefault(&c.AckBatchSize, DefaultAckBatchSize)
	setDefault(&c.AckFlushInterval, DefaultAckFlushInterval)
	setDefault(&c.CloseTimeout, DefaultCloseTimeout)
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate reports every invalid field, wrapped in ErrInvalidConfig.
func (c SubscriberConfig) Validate() error {
	errs := []error{
		checkClient(c.Client),
		checkPrefixes(c.StreamPrefix, c.ControlPrefix),
		keys.ValidateName("consumer group", c.ConsumerGroup),
		keys.ValidateName("consumer", c.ConsumerName),
		notNegative("DefaultPartitionCount", c.DefaultPartitionCount),
		checkTrimPolicy(c.TrimPolicy),
		positive("BatchCount", c.BatchCount),
		positive("ClaimBatchSize", c.ClaimBatchSize),
		positive("MaxInFlightPerPartition", c.MaxInFlightPerPartition),
		positive("AckBatchSize", c.AckBatchSize),
		positive("RetryMoverBatch", c.RetryMoverBatch),
		notNegative("MaxLeasedPartitions", c.MaxLeasedPartitions),
		notNegative("MaxInFlight", c.MaxInFlight),
		checkFilter(c.PartitionModulo, c.PartitionRemainder),
		c.checkTopics(),
		checkGroupStart(c.GroupStartID),
		checkAckDeletePolicy(c.AckDeletePolicy),
		checkRetention(c.Retention, c.DLQRetention, c.DLQRetentionMaxLen),
		c.Memory.validate(),
		checkPayloadThreshold(c.PayloadThreshold),
		checkGroupExpiry(c.GroupExpiry, c.TrimInterval),
	}
	for name, d := range map[string]time.Duration{
		"BlockTime": c.BlockTime, "LeaseTTL": c.LeaseTTL, "RenewInterval": c.RenewInterval,
		"RebalanceInterval": c.RebalanceInterval, "PendingScanInterval": c.PendingScanInterval,
		"ClaimIdle": c.ClaimIdle, "AckFlushInterval": c.AckFlushInterval,
		"CloseTimeout": c.CloseTimeout, "PartitionRefreshInterval": c.PartitionRefreshInterval,
		"RetryMoverInterval": c.RetryMoverInterval, "AckSetTTL": c.AckSetTTL,
		"TrimInterval": c.TrimInterval,
	} {
		errs = append(errs, durationPositive(name, d))
	}
	if c.MessageMaxRetries < -1 {
		errs = append(errs, fmt.Errorf("MessageMaxRetries must be >= 0, or -1 (only the RetryPolicy caps), got %d", c.MessageMaxRetries))
	}
	errs = append(errs, checkLeaseTimes(c.LeaseTTL, c.RenewInterval, c.RebalanceInterval),
		checkStaticGrace(c.StaticMemberGrace, c.LeaseTTL, c.generatedName))
	if c.LeaseTTL > c.RenewInterval && c.BlockTime >= c.LeaseTTL-c.RenewInterval {
		// The fetcher does not read for a partition whose lease may lapse before the read
		// returns: with so long a block it would skip reads for part of every renewal cycle.
		errs = append(errs, fmt.Errorf("BlockTime %s must be less than LeaseTTL - RenewInterval (%s)",
			c.BlockTime, c.LeaseTTL-c.RenewInterval))
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

// checkReplicas checks MinReplicas and ReplicaTimeout against each other and the client.
// WAIT counts the replicas of the node that served the connection it is sent on, after the
// writes sent before it there. A single-node pipeline is one connection; go-redis splits a
// Cluster (or Ring) pipeline by the keys' slots and sends a keyless WAIT to any node, so
// MinReplicas is refused there rather than answered by the wrong node. Doing it right would
// mean one pipeline per master outside go-redis's cluster pipeline, without its MOVED and ASK
// handling during a resharding or failover.
func checkReplicas(c redis.UniversalClient, replicas int, timeout time.Duration) error {
	switch {
	case replicas < 0:
		return fmt.Errorf("MinReplicas must not be negative, got %d", replicas)
	case timeout < 0:
		return fmt.Errorf("ReplicaTimeout must not be negative, got %s", timeout)
	case replicas == 0 || server.IsNil(c):
		return nil
	case timeout < time.Millisecond:
		return fmt.Errorf("ReplicaTimeout must be at least 1ms (WAIT counts milliseconds; WAIT 0 blocks for ever), got %s", timeout)
	}
	if server.Sharded(c) {
		return fmt.Errorf("MinReplicas needs a single-node or Sentinel (failover) client, not a %T: "+
			"go-redis sends a keyless WAIT in a cluster pipeline to any node, not to the masters that took the writes", c)
	}
	if rt, ok := server.ReadTimeout(c); ok && rt > 0 && timeout > rt/2 {
		return fmt.Errorf("ReplicaTimeout %s must be at most half the client's ReadTimeout %s: "+
			"go-redis reads a pipeline's replies, WAIT's included, within ReadTimeout and sends a timed-out pipeline again", timeout, rt)
	}
	return nil
}

func checkPrefixes(stream, control string) error {
	for _, p := range []string{stream, control} {
		if p != "" {
			if err := keys.ValidateName("key prefix", p); err != nil {
				return err
			}
		}
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

func checkFilter(mod, rem int) error {
	switch {
	case mod < 0 || rem < 0:
		return fmt.Errorf("PartitionModulo and PartitionRemainder must not be negative, got %d and %d", mod, rem)
	case mod == 0 && rem != 0:
		return fmt.Errorf("PartitionRemainder %d needs a PartitionModulo", rem)
	case mod > 0 && rem >= mod:
		return fmt.Errorf("PartitionRemainder %d must be below PartitionModulo %d", rem, mod)
	}
	return nil
}

func checkGroupStart(id string) error {
	if id == "$" || id == "0" || id == "0-0" || streamIDPattern.MatchString(id) {
		return nil
	}
	return fmt.Errorf("GroupStartID must be \"0-0\", \"$\" or a stream id, got %q", id)
}

func checkAckDeletePolicy(p AckDeletePolicy) error {
	switch p {
	case AckDeleteNone, AckDeleteImmediate, AckDeleteAllGroups:
		return nil
	}
	return fmt.Errorf("AckDeletePolicy must be %q, %q or %q, got %q", AckDeleteNone, AckDeleteImmediate, AckDeleteAllGroups, p)
}

func checkTrimPolicy(p TrimPolicy) error {
	if p == TrimAcked || p == TrimHard {
		return nil
	}
	return fmt.Errorf("TrimPolicy must be %q or %q, got %q", TrimAcked, TrimHard, p)
}

func checkRetention(retention, dlqRetention time.Duration, dlqMaxLen int64) error {
	if retention < 0 || dlqRetention < 0 || dlqMaxLen < 0 {
		return fmt.Errorf("Retention, DLQRetention and DLQRetentionMaxLen must not be negative, got %s, %s, %d", retention, dlqRetention, dlqMaxLen)
	}
	return nil
}

func checkLeaseTimes(ttl, renew, rebalance time.Duration) error {
	if ttl <= renew {
		return fmt.Errorf("LeaseTTL %s must exceed RenewInterval %s", ttl, renew)
	}
	if ttl <= rebalance {
		return fmt.Errorf("LeaseTTL %s must exceed RebalanceInterval %s (it is also the heartbeat TTL)", ttl, rebalance)
	}
	return nil
}

func checkStaticGrace(grace, ttl time.Duration, generatedName bool) error {
	switch {
	case grace == 0:
		return nil
	case grace < ttl:
		return fmt.Errorf("StaticMemberGrace %s must be 0 (off) or at least LeaseTTL %s (a lease outlives its holder by up to LeaseTTL anyway)", grace, ttl)
	case generatedName:
		return errors.New("StaticMemberGrace needs an explicit ConsumerName: a generated one is new at every start, so no restart could take its partitions back")
	}
	return nil
}

func wrapConfig(errs []error) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

func checkPayloadThreshold(n int) error {
	if n < -1 {
		return fmt.Errorf("PayloadThreshold must be > 0, 0 (default) or -1 (off), got %d", n)
	}
	return nil
}
