package streamq

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Subscriber consumes partitioned topics as one member of a consumer group. Each partition
// is leased by one member of the group at a time and delivered in stream order. It
// implements message.Subscriber and message.SubscribeInitializer.
type Subscriber struct {
	config SubscriberConfig
	logger watermill.LoggerAdapter
	space  keys.Space
	reg    *partition.Registry
	server *health.Check // shared by every user of the client
	memory *health.Watch // nil when Memory.Interval is -1
	stats  counters
	clock  clock.Clock // the time of every timing rule; tests set a fake one
	pause  *run.Gate   // Pause and Resume
	warned sync.Map    // topic -> struct{}: a differing stated partition count was logged
	hint   nackHint    // a nack without a reason was logged

	// The per-Subscriber caps, over every subscription: the MaxInFlight semaphore (nil: no
	// cap) and MaxLeasedPartitions.
	inFlight chan struct{}
	leases   *leaseBudget

	leaveOnClose atomic.Bool // a static member's Close hands its partitions over (LeaveOnClose)

	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	subs    map[*subscription]struct{}
	wg      sync.WaitGroup
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
	space := keys.New(config.Keyspace.StreamPrefix, config.Keyspace.ControlPrefix)
	var inFlight chan struct{}
	if config.Delivery.MaxInFlight > 0 {
		inFlight = make(chan struct{}, config.Delivery.MaxInFlight)
	}
	memory := newMemoryWatch(config.Client, config.Memory, logger, config.Metrics)
	return &Subscriber{
		memory:  memory,
		config:  config,
		logger:  logger.With(watermill.LogFields{"consumer_group": config.ConsumerGroup}),
		space:   space,
		reg:     partition.NewRegistry(config.Client, space),
		server:  health.CheckOf(config.Client),
		clock:   clock.Real(),
		pause:   run.NewGate(),
		closing: make(chan struct{}),
		subs:    map[*subscription]struct{}{},

		inFlight: inFlight,
		leases:   newLeaseBudget(config.Membership.MaxLeasedPartitions),
	}, nil
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
	v, err := newView(s.space, topic)
	if err != nil {
		return nil, err
	}
	if err := s.add(); err != nil {
		return nil, err
	}
	if err := s.initialize(ctx, v); err != nil {
		s.wg.Done()
		return nil, apiError(err)
	}
	sub := s.newTrackedSubscription(ctx, v)
	if err := sub.claimName(ctx); err != nil { // a static member's name (StaticMemberGrace)
		s.untrack(sub)
		sub.discard()
		s.wg.Done()
		return nil, err
	}
	go func() {
		defer s.wg.Done()
		sub.run()
		s.untrack(sub)
	}()
	return sub.messages(), nil
}

// SubscribeInitialize registers the consumer group on topic, so that messages published
// before the first Subscribe are kept for the group (retention waits for it too): it creates
// the group on every partition of a topic that exists, and creates a missing topic when
// DefaultPartitionCount is set. On a missing topic without a stated count it creates no topic:
// it declares the group, and whoever creates the topic (a Publisher's first publish,
// admin.CreateTopic) creates the group on every partition before anything is appended.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	v, err := newView(s.space, topic)
	if err != nil {
		return err
	}
	return apiError(s.initialize(context.Background(), v))
}

// initialize declares the group on a base topic, creates the topic when this Subscriber
// states a partition count and the topic is missing, and creates the group on every partition
// of the topic if it exists. A missing topic with no stated count is left to its creator.
func (s *Subscriber) initialize(ctx context.Context, v view) error {
	if err := s.server.Ensure(ctx, s.config.Client, s.logger); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.name, err)
	}
	if s.memory != nil {
		s.memory.Start() // once: the first Subscribe or SubscribeInitialize starts the watch
	}
	// A new subscription is a new intent to consume, after a forced delete as before it.
	if err := s.reg.ClearTombstones(ctx, v.topic, s.config.ConsumerGroup); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.name, err)
	}
	if !v.dlq {
		// Declared before looking for the topic: a creator that registers the topic after
		// this sees the declaration; one that registered it before is seen below.
		if err := s.reg.DeclareGroup(ctx, v.topic, s.config.ConsumerGroup, s.config.Membership.GroupStartID); err != nil {
			return fmt.Errorf("subscribe to %q: %w", v.name, err)
		}
	}
	n, err := s.topicCount(ctx, v)
	if err != nil || n == 0 {
		return err
	}
	return s.createGroups(ctx, v, 0, n)
}

// topicCount is the partition count of v's topic, creating the topic first when this
// Subscriber states a count; 0 when the topic does not exist and no count is stated.
func (s *Subscriber) topicCount(ctx context.Context, v view) (int, error) {
	stated := s.config.DefaultPartitionCount
	if stated == 0 {
		m, err := s.reg.Meta(ctx, v.topic)
		if err != nil || !m.Exists {
			return 0, err
		}
		return m.Count, nil
	}
	t, err := s.reg.RegisterTopic(ctx, v.topic, stated, nil)
	if err != nil {
		return 0, fmt.Errorf("subscribe to %q: %w", v.name, err)
	}
	if t.Count != stated {
		if _, logged := s.warned.LoadOrStore(v.topic, struct{}{}); !logged {
			partition.LogCountDiffers(s.logger, v.topic, stated, t.Count)
		}
	}
	return t.Count, partition.CreateDeclaredGroups(ctx, s.config.Client, s.space, v.topic, t)
}

func (s *Subscriber) createGroups(ctx context.Context, v view, from, to int) error {
	streams := make([]string, 0, to-from)
	for p := from; p < to; p++ {
		streams = append(streams, v.stream(p))
	}
	if err := stream.CreateGroups(ctx, s.config.Client, streams, s.config.ConsumerGroup, s.config.Membership.GroupStartID); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.name, err)
	}
	return nil
}

func (s *Subscriber) add() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSubscriberClosed
	}
	s.wg.Add(1)
	return nil
}

// memberName is ConsumerName for the first live subscription to a topic and
// ConsumerName-N for further ones, so each acts as its own member.
// The caller holds s.mu.
func (s *Subscriber) memberName(topic string) string {
	inUse := map[string]bool{}
	for sub := range s.subs {
		if sub.topic == topic {
			inUse[sub.member] = true
		}
	}
	name := s.config.Membership.ConsumerName
	for k := 2; inUse[name]; k++ {
		name = s.config.Membership.ConsumerName + "-" + strconv.Itoa(k)
	}
	return name
}

func (s *Subscriber) newTrackedSubscription(ctx context.Context, v view) *subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := newSubscription(ctx, s, v, s.memberName(v.name))
	s.subs[sub] = struct{}{}
	return sub
}

func (s *Subscriber) untrack(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, sub)
}

// Close stops every subscription: it stops fetching, waits up to CloseTimeout for in-flight
// messages, flushes acks, releases leases (a static member keeps them for its
// StaticMemberGrace, unless LeaveOnClose was called), leaves the groups and closes the
// channels. It returns when all goroutines are gone, never closes the Redis client, and is
// idempotent.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	if s.memory != nil {
		s.memory.Stop()
	}
	return nil
}

// memoryPressure reports whether Redis memory is at or above the high-water mark (false when
// it is not watched).
func (s *Subscriber) memoryPressure() bool { return s.memory != nil && s.memory.Pressure() }

// LeaveOnClose makes the Close of a static member (StaticMemberGrace) hand its partitions
// over at once and free its name, as the Close of a member that is not static does, instead
// of keeping them for the grace: call it before closing a member that will not come back (a
// scale-down). It also applies to a subscription that ends by its context. No effect on a
// member that is not static. Safe for concurrent use.
func (s *Subscriber) LeaveOnClose() { s.leaveOnClose.Store(true) }

// crash stops every subscription the way a killed process would: no ack flush, no lease
// release, no leave. Tests use it to prove takeover.
func (s *Subscriber) crash() {
	s.mu.Lock()
	subs := make([]*subscription, 0, len(s.subs))
	for sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	for _, sub := range subs {
		sub.crash()
	}
	_ = s.Close()
}

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

type counters struct {
	delivered, acked, nacked, malformed, deadLettered, payloadMissing, leasesLost, trimmedUnacked atomic.Int64
}

// Stats returns the Subscriber's counters. Safe for concurrent use.
func (s *Subscriber) Stats() SubscriberStats {
	return SubscriberStats{
		Delivered:      s.stats.delivered.Load(),
		Acked:          s.stats.acked.Load(),
		Nacked:         s.stats.nacked.Load(),
		Malformed:      s.stats.malformed.Load(),
		DeadLettered:   s.stats.deadLettered.Load(),
		PayloadMissing: s.stats.payloadMissing.Load(),
		LeasesLost:     s.stats.leasesLost.Load(),
		TrimmedUnacked: s.stats.trimmedUnacked.Load(),
		Memory:         serverMemories(s.memory),
		Outages:        s.outages(),
	}
}

// outages are the partitions waiting out an outage, in topic and partition order.
func (s *Subscriber) outages() []PartitionOutage {
	s.mu.Lock()
	subs := make([]*subscription, 0, len(s.subs))
	for sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	var out []PartitionOutage
	for _, sub := range subs {
		out = append(out, sub.outages()...)
	}
	slices.SortFunc(out, func(a, b PartitionOutage) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
