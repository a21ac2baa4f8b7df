package streamq

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/health"
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
	// ErrInvalidMessage reports a message Publish refuses before sending anything of the call:
	// nil, an empty UUID, an x-force-partition-id that is not a decimal index ("abc"),
	// metadata over 1 MiB or a payload over 512 MiB (what Redis takes in one value by
	// default). The error names the message and what is wrong.
	ErrInvalidMessage = errors.New("invalid message")
	// ErrPartitionOutOfRange reports an x-force-partition-id outside the topic's partitions
	// (one that is not a decimal index at all is ErrInvalidMessage).
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
	// ErrNotReplicated reports a Publish under PublisherConfig.Replication.MinReplicas whose writes fewer
	// replicas confirmed than asked within Replication.Timeout (a *ReplicationError carries the
	// counts), or whose WAIT failed. The messages were written to the master: they exist and
	// will be delivered unless the master is lost before a replica has them. Publishing them
	// again is safe under at-least-once delivery but may deliver them twice.
	ErrNotReplicated = errors.New("not replicated")
	// ErrConsumerNameInUse is returned by Subscribe of a static member (StaticMemberGrace)
	// whose ConsumerName another live process holds in the group on the topic: that process
	// heartbeated while this one waited for it to be gone. The error names the consumer, the
	// group and the topic. This process leased nothing.
	ErrConsumerNameInUse = errors.New("consumer name in use by another live process")
	// ErrRedisFull reports a Publish that Redis refused because it is at maxmemory (with
	// maxmemory-policy noeviction, the setting streamq needs): nothing of the refused messages
	// was written, not even their idempotency records, so sending them again later appends
	// each once. Consumers go on draining a full Redis, and the trims that follow their acks
	// free memory: publishing resumes by itself. A *RedisFullError carries the topic and the
	// server's memory. See docs/storage.md.
	ErrRedisFull = errors.New("redis is full")
)

// RedisFullError is the ErrRedisFull of one refused publish.
type RedisFullError struct {
	Topic     string
	Partition int
	// Server is the master that refused the write ("host:port"; "" when unknown).
	Server string
	// UsedMemory and MaxMemory are the server's used_memory and maxmemory in bytes, read
	// when it refused; both 0 when they could not be read.
	UsedMemory, MaxMemory int64
	// Err is the server's reply (an OOM error).
	Err error
}

func (e *RedisFullError) Error() string {
	where := ""
	if e.Server != "" {
		where = " " + e.Server
	}
	mem := ""
	if e.MaxMemory > 0 {
		mem = fmt.Sprintf(" (used memory %s of maxmemory %s)", mib(e.UsedMemory), mib(e.MaxMemory))
	}
	return fmt.Sprintf("%v: Redis%s refused partition %d of %q at maxmemory%s; it accepts publishes again once consumers drain it: %v",
		ErrRedisFull, where, e.Partition, e.Topic, mem, e.Err)
}

// Is reports ErrRedisFull.
func (e *RedisFullError) Is(target error) bool { return target == ErrRedisFull }

// Unwrap returns the server's reply.
func (e *RedisFullError) Unwrap() error { return e.Err }

// mib formats bytes as MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ReplicationError is the ErrNotReplicated of a pipeline that fewer replicas than MinReplicas
// confirmed within Replication.Timeout.
type ReplicationError struct {
	Wanted  int           // PublisherConfig.Replication.MinReplicas
	Acked   int           // replicas that confirmed every write of the pipeline (WAIT's reply)
	Timeout time.Duration // PublisherConfig.Replication.Timeout
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

// apiError is an error of the engine as Publish, Subscribe and SubscribeInitialize (op:
// `publish to "orders"`, ...) return it. One caused by a closed client, or by credentials a
// server refused, wraps ErrInvalidConfig as well: the caller closed the client before the
// Publisher or Subscriber that uses it, or configured it wrongly. One of a server that cannot
// be reached says so and where, without the engine's step that met it.
func apiError(op string, err error) error {
	var netErr *net.OpError
	switch {
	case err == nil || errors.Is(err, ErrInvalidConfig):
		return err
	case errors.Is(err, health.ErrAuth):
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	case server.IsClosed(err):
		return fmt.Errorf("%w: %s: the Redis client was closed by the caller (close it after the Publishers and Subscribers that use it): %w",
			ErrInvalidConfig, op, err)
	case errors.As(err, &netErr) && netErr.Addr != nil:
		return fmt.Errorf("%s: cannot reach Redis at %s: %w", op, netErr.Addr, netErr)
	}
	return err
}
