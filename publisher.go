package streamq

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/publish"
)

// ForcePartitionMetadata forces a message onto a partition (decimal index). An index outside
// the topic's partitions is an ErrPartitionOutOfRange, never a silent modulo.
const ForcePartitionMetadata = codec.HeaderForcePartition

// streamIDPattern is a stream id "ms-seq" (MembershipConfig.GroupStartID is checked with it).
var streamIDPattern = regexp.MustCompile(`^\d+-\d+$`)

// Publisher publishes messages to partitioned topics. It implements message.Publisher.
type Publisher struct {
	config PublisherConfig
	engine *publish.Engine

	mu     sync.RWMutex
	closed bool
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher validates config and returns a Publisher. logger may be nil. It sends nothing
// to Redis: the first Publish checks the servers behind the client (see MinRedisVersion).
func NewPublisher(config PublisherConfig, logger watermill.LoggerAdapter) (*Publisher, error) {
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	return &Publisher{config: config, engine: publish.New(publishConfig(config, logger))}, nil
}

// Publish appends msgs to topic in one round trip, each to the partition its key maps to.
// Concurrent calls share round trips: their writes are coalesced into one pipeline. The first
// publish to a topic registers it; the first publish on a client checks its servers (an
// ErrUnsupportedServer for one older than MinRedisVersion). It returns when Redis has
// confirmed every message, or the first error; under MinReplicas, when that many replicas
// confirmed them, or an error wrapping ErrNotReplicated. It stops waiting when any message's
// context is done (the messages may then still be written). A closed client gives an error
// wrapping ErrInvalidConfig and redis.ErrClosed. Publish is safe for concurrent use.
//
// Each message Redis took gets its partition and stream id in its metadata, read with
// PublishedPartition and PublishedStreamID: set also when Publish returns an error for
// another message or for the replicas (ErrNotReplicated: the entries are on the master).
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if p.config.Tracer != nil {
		return p.tracedPublish(topic, msgs)
	}
	return publishError(topic, p.publish(topic, msgs))
}

func (p *Publisher) publish(topic string, msgs []*message.Message) error {
	clearPublished(msgs) // a previous Publish's results are not written into the entries
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrPublisherClosed
	}
	if err := validateTopic(topic); err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := checkMessages(msgs); err != nil {
		return fmt.Errorf("publish to %q: %w", topic, err)
	}
	ctx, cancel := mergeContexts(msgs)
	defer cancel()
	return p.engine.Publish(ctx, topic, msgs)
}

// The largest message Publish takes: metadata of at most maxMetadataSize bytes (keys and
// values; a stream entry carries it inline), and a payload of at most maxPayloadSize bytes
// (Redis's default proto-max-bulk-len: the most one value may hold).
const (
	maxMetadataSize = 1 << 20
	maxPayloadSize  = 512 << 20
)

// checkMessages refuses, before anything is sent, a call with a message Redis could not take
// or its partition could not be told: each error wraps ErrInvalidMessage.
func checkMessages(msgs []*message.Message) error {
	for i, m := range msgs {
		if err := checkMessage(m); err != nil {
			name := fmt.Sprintf("#%d", i)
			if m != nil && m.UUID != "" {
				name = fmt.Sprintf("%s (#%d)", m.UUID, i)
			}
			return fmt.Errorf("%w: message %s: %w", ErrInvalidMessage, name, err)
		}
	}
	return nil
}

func checkMessage(m *message.Message) error {
	switch {
	case m == nil:
		return errors.New("nil")
	case m.UUID == "":
		return errors.New("empty UUID (watermill.NewUUID() makes one)")
	case len(m.Payload) > maxPayloadSize:
		return fmt.Errorf("payload of %d bytes, more than %d", len(m.Payload), maxPayloadSize)
	}
	if err := checkForcedPartition(m); err != nil {
		return err
	}
	size := 0
	for k, v := range m.Metadata {
		size += len(k) + len(v)
	}
	if size > maxMetadataSize {
		return fmt.Errorf("metadata of %d bytes, more than %d", size, maxMetadataSize)
	}
	return nil
}

// publishError is apiError for a Publish to topic, naming the Publish only when there is an
// error (a successful Publish formats nothing).
func publishError(topic string, err error) error {
	if err == nil {
		return nil
	}
	return apiError(fmt.Sprintf("publish to %q", topic), err)
}

// router picks each message's partition: x-force-partition-id when set, else the
// Partitioner, given the message's key, or under idempotent publish (byUUID) its UUID when
// it has none.
type router struct {
	partitioning PartitioningConfig
	byUUID       bool
}

// checkForcedPartition refuses an x-force-partition-id that is no decimal index at all
// ("abc"): a message to fix, unlike an index outside the topic (ErrPartitionOutOfRange),
// which a topic grown to more partitions would take.
func checkForcedPartition(m *message.Message) error {
	forced := m.Metadata.Get(ForcePartitionMetadata)
	if forced == "" {
		return nil
	}
	if _, err := strconv.Atoi(forced); err != nil {
		return fmt.Errorf("%s=%q is not a decimal partition index", ForcePartitionMetadata, forced)
	}
	return nil
}

func (r router) route(topic string, n int, msg *message.Message) (int, error) {
	if forced := msg.Metadata.Get(ForcePartitionMetadata); forced != "" {
		part, err := strconv.Atoi(forced)
		if err != nil { // checkMessages refused it before anything was sent
			return 0, fmt.Errorf("%w: message %s: %w", ErrInvalidMessage, msg.UUID, checkForcedPartition(msg))
		}
		if part < 0 || part >= n {
			return 0, &PartitionError{Topic: topic, Partition: part, Err: fmt.Errorf(
				"%w: %s=%q, topic has %d partitions", ErrPartitionOutOfRange, ForcePartitionMetadata, forced, n)}
		}
		return part, nil
	}
	key := r.partitioning.PartitionKey(topic, msg)
	if key == "" && r.byUUID {
		key = msg.UUID // a message sent again goes where it went: duplicates are found per partition
	}
	part := r.partitioning.Partitioner.Partition(key, n)
	if part < 0 || part >= n {
		return 0, &PartitionError{Topic: topic, Partition: part, Err: fmt.Errorf(
			"%w: partitioner returned %d for %d partitions", ErrPartitionOutOfRange, part, n)}
	}
	return part, nil
}

// Close stops the publisher: later Publish calls return ErrPublisherClosed. It waits for
// running Publish calls, does not close the Redis client and is idempotent.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.engine.Close()
	return nil
}

// mergeContexts returns a context done when any message's context is done.
func mergeContexts(msgs []*message.Message) (context.Context, context.CancelFunc) {
	first := msgs[0].Context()
	distinct := []context.Context{}
	for _, m := range msgs[1:] {
		if c := m.Context(); c != first && c.Done() != nil {
			distinct = append(distinct, c)
		}
	}
	if len(distinct) == 0 {
		return first, func() {}
	}
	ctx, cancel := context.WithCancel(first)
	stops := make([]func() bool, len(distinct))
	for i, c := range distinct {
		stops[i] = context.AfterFunc(c, cancel)
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel()
	}
}

// tracedPublish is Publish under PublisherConfig.Tracer (the Subscriber's tracing reaches the
// engine as its hooks, wire.go): each message's span starts before
// it is marshaled (so the trace context the Tracer sets is stored with it) and ends with
// what became of that message.
func (p *Publisher) tracedPublish(topic string, msgs []*message.Message) error {
	ends := make([]func(error), len(msgs))
	for i, m := range msgs {
		if m != nil {
			ends[i] = p.config.Tracer.StartPublish(topic, m)
		}
	}
	err := publishError(topic, p.publish(topic, msgs))
	for i, end := range ends {
		if end != nil {
			end(publishErrOf(msgs[i], err))
		}
	}
	return err
}

// publishErrOf is the error of one message of a Publish that returned err: none when Redis
// took it (an error for another message is not its own), unless too few replicas confirmed.
func publishErrOf(m *message.Message, err error) error {
	if err == nil {
		return nil
	}
	if _, written := PublishedPartition(m); written && !errors.Is(err, ErrNotReplicated) {
		return nil
	}
	return err
}
