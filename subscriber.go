package streamq

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/consume"
	"github.com/streamq-dev/streamq/internal/keys"
)

// Subscriber consumes partitioned topics as one member of a consumer group. Each partition
// is leased by one member of the group at a time and delivered in stream order. It
// implements message.Subscriber and message.SubscribeInitializer.
type Subscriber struct {
	config SubscriberConfig
	logger watermill.LoggerAdapter
	space  keys.Space
	engine *consume.Consumer
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// NewSubscriber validates config and returns a Subscriber. logger may be nil.
func NewSubscriber(config SubscriberConfig, logger watermill.LoggerAdapter) (*Subscriber, error) {
	config.setDefaults()
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	logger = logger.With(watermill.LogFields{"consumer_group": config.ConsumerGroup})
	space := keys.New(config.Keyspace.StreamPrefix, config.Keyspace.ControlPrefix)
	return &Subscriber{config: config, logger: logger, space: space, engine: consume.New(consumeConfig(config, space, logger))}, nil
}

// Subscribe joins the consumer group on topic and returns the channel of messages from the
// partitions this member leases. Each message must be acked or nacked; the next message of a
// partition is delivered after that (MaxInFlightPerPartition 1). The channel is closed when
// ctx is done or the Subscriber is closed. Subscribe is safe for concurrent use; several
// subscriptions to one topic act as separate members of the group. The first Subscribe or
// SubscribeInitialize on a client checks its servers (ErrUnsupportedServer for one older than
// MinRedisVersion); a closed client gives an error wrapping ErrInvalidConfig and
// redis.ErrClosed.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	v, err := s.space.NewView(topic)
	if err != nil {
		return nil, err
	}
	ch, err := s.engine.Subscribe(ctx, v)
	return ch, apiError(fmt.Sprintf("subscribe to %q", topic), err)
}

// SubscribeInitialize registers the consumer group on topic, so that messages published
// before the first Subscribe are kept for the group (retention waits for it too): it creates
// the group on every partition of a topic that exists, and creates a missing topic when
// DefaultPartitionCount is set. On a missing topic without a stated count it creates no topic:
// it declares the group, and whoever creates the topic (a Publisher's first publish,
// admin.CreateTopic) creates the group on every partition before anything is appended.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	v, err := s.space.NewView(topic)
	if err != nil {
		return err
	}
	return apiError(fmt.Sprintf("subscribe to %q", topic), s.engine.Initialize(context.Background(), v))
}

// Close stops every subscription: it stops fetching, waits up to CloseTimeout for in-flight
// messages, flushes acks, releases leases (a static member keeps them for its
// StaticMemberGrace, unless LeaveOnClose was called), leaves the groups and closes the
// channels. It returns when all goroutines are gone, never closes the Redis client, and is
// idempotent.
func (s *Subscriber) Close() error {
	s.engine.Close()
	return nil
}

// LeaveOnClose makes the Close of a static member (StaticMemberGrace) hand its partitions
// over at once and free its name, as the Close of a member that is not static does, instead
// of keeping them for the grace: call it before closing a member that will not come back (a
// scale-down). It also applies to a subscription that ends by its context. No effect on a
// member that is not static. Safe for concurrent use.
func (s *Subscriber) LeaveOnClose() { s.engine.LeaveOnClose() }

// crash stops every subscription the way a killed process would: no ack flush, no lease
// release, no leave. Tests use it to prove takeover.
func (s *Subscriber) crash() { s.engine.Crash() }

// Pause stops delivery on every subscription of the Subscriber: nothing more is read or
// handed to a handler, while the Subscriber keeps its leases and its place in each group
// (no rebalance) and messages already in flight finish normally. Messages published
// meanwhile wait in their partitions. Pause is safe for concurrent use; pausing a paused
// Subscriber does nothing. To pause a whole group across processes, see admin.PauseGroup.
func (s *Subscriber) Pause() {
	if s.engine.Pause() {
		s.logger.Info("Delivery paused", nil)
	}
}

// Resume ends a Pause: each partition goes on where it stopped, in order. Resuming a
// Subscriber that is not paused does nothing; a group an operator paused stays paused.
func (s *Subscriber) Resume() {
	if s.engine.Resume() {
		s.logger.Info("Delivery resumed", nil)
	}
}

// Paused reports whether Pause is in effect (not whether an operator paused a group: see
// admin.GroupStats).
func (s *Subscriber) Paused() bool { return s.engine.Paused() }

// InFlight is the number of messages handed to handlers and not yet acked or nacked, over
// every subscription of the Subscriber. Safe for concurrent use.
func (s *Subscriber) InFlight() int { return s.engine.InFlight() }

// SubscriberStats are counters of one Subscriber since it was created.
type SubscriberStats struct {
	Delivered, Acked, Nacked, Malformed, DeadLettered, PayloadMissing, LeasesLost int64
	// TrimmedUnacked counts entries of this Subscriber's group that a hard retention cap
	// (TrimHard) removed before the group acked them, as seen by this Subscriber's lease
	// holders on their partitions.
	TrimmedUnacked int64
	// Memory is the last reading of each Redis server's memory (MemoryWatch), by address;
	// empty before the first Subscribe or SubscribeInitialize, and when memory is not watched
	// or the servers refuse INFO memory.
	Memory []ServerMemory
	// Outages are the partitions of this Subscriber waiting out a downstream outage
	// (RetryConfig.Outage), by topic and partition; empty when none is.
	Outages []PartitionOutage
}

// Stats returns the Subscriber's counters. Safe for concurrent use.
func (s *Subscriber) Stats() SubscriberStats { return subscriberStatsOf(s.engine.Stats()) }
