package publish

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
)

// DefaultMaxLen is the length retention of a Publisher whose config sets none, the same as
// that of a topic whose Publishers recorded none.
const DefaultMaxLen = partition.DefaultMaxLen

// Config is what one Publisher's engine runs with: plain values, already defaulted and
// validated (the API's wire.go fills it from a PublisherConfig). Every field is required but
// Marshal and Memory.
type Config struct {
	Client redis.UniversalClient
	Space  keys.Space

	// DefaultPartitionCount is the partition count of the topics the engine creates by its
	// first publish; 0: not stated (a new topic gets one partition).
	DefaultPartitionCount int
	// RefreshInterval is how often a known topic's partition count is read again.
	RefreshInterval time.Duration
	// Route picks the partition of msg among topic's n.
	Route func(topic string, n int, msg *message.Message) (int, error)
	// Marshal turns a message into an entry's fields. Nil: the default entry format
	// (internal/codec), whose fields are appended to the XADD in place.
	Marshal func(topic string, msg *message.Message) (map[string]any, error)

	// OffloadThreshold: a payload larger than this many bytes goes to a key of its own
	// (<= 0: never), kept at most OffloadTTL (0: until its entry is acked or gone).
	OffloadThreshold int
	OffloadTTL       time.Duration

	Idempotency Idempotency
	Pipeline    Pipeline
	Replicas    Replicas // the WAIT that ends each pipeline; N 0: none
	Trim        Trim

	Counters Counters
	Errors   Errors
	// Check checks the servers behind Client on the first Publish.
	Check *health.Check
	// Memory is the memory watch the first Publish starts, told of every refusal at
	// maxmemory, and stopped by Close; nil: memory is not watched.
	Memory *health.Watch
	Logger watermill.LoggerAdapter
	Clock  clock.Clock
}

// Idempotency is how each message is appended at most once: by producer and sequence number
// (numbered by the flusher that sends it), or by its UUID.
type Idempotency struct {
	// Window is how long a message sent again is recognized; 0: off (plain XADD).
	Window time.Duration
	// ByUUID finds a message sent again by its UUID, whoever sent it.
	ByUUID bool
}

// on reports whether appends are idempotent.
func (i Idempotency) on() bool { return i.Window > 0 }

// Pipeline is how concurrent Publish calls share pipelines: at most MaxSize writes a
// pipeline, Flushers pipelines in flight, QueueSize calls waiting.
type Pipeline struct {
	MaxSize, Flushers, QueueSize int
}

// Trim is the length retention of the topics the engine publishes to: it records it in a
// topic's metadata when it registers the topic, and trims in the background.
type Trim struct {
	// MaxLen is about how many entries each partition keeps; -1: no length retention.
	MaxLen int64
	// Exact trims to exactly MaxLen; else whole macro nodes only.
	Exact bool
	// Hard removes entries a group has not acked too (counted); else a trim stops at them.
	Hard bool
	// GroupExpiry: a group with no live member on a partition for this long no longer
	// holds its trims back; 0: off.
	GroupExpiry time.Duration
}

// Errors build the API's errors, so that callers test what Publish returns with errors.Is
// and errors.As against the API's own types.
type Errors struct {
	// Full is the error of a write Redis refused at maxmemory (err: its OOM reply).
	Full func(where FullInfo, err error) error
	// NotReplicated is the error of a pipeline whose WAIT counted acked of want.N replicas
	// within want.Timeout, or failed with err.
	NotReplicated func(want Replicas, acked int, err error) error
}

// FullInfo is where Redis refused a write at maxmemory: the partition, the master that holds
// it ("host:port"; "" when unknown) and its used_memory and maxmemory in bytes (both 0 when
// they could not be read).
type FullInfo struct {
	Topic                 string
	Partition             int
	Server                string
	UsedMemory, MaxMemory int64
}
