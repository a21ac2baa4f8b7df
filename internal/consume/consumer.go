// Package consume is the engine of a Subscriber: its subscriptions, and in each the
// partitions this member owns, with what serves one partition (the fetcher's reads, the
// delivery loop in stream order or per key, the claimer, the acker, the settler that carries
// out each decision, the mover of due retries and delays, the housekeeper of retention, the
// pause gates and the wait through a downstream outage). Membership (leases, rebalancing,
// static members) is package lease's; the decision on a nack is package retry's; every
// storage step goes through a store.Partition built once per partition.
package consume

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Consumer is one Subscriber's engine: every subscription it runs, and what they share.
type Consumer struct {
	cfg          Config
	reg          *partition.Registry
	budget       *lease.Budget
	stats        counts
	hint         nackHint
	full         fullNotice
	inFlight     chan struct{}
	pause        *run.Gate
	warned       sync.Map // topic -> struct{}: a differing stated partition count was logged
	leaveOnClose atomic.Bool

	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	subs    map[*subscription]struct{}
	wg      sync.WaitGroup
}

// New returns the Consumer of cfg; nothing runs before the first Subscribe.
func New(cfg Config) *Consumer {
	var inFlight chan struct{}
	if cfg.Dispatch.MaxInFlight > 0 {
		inFlight = make(chan struct{}, cfg.Dispatch.MaxInFlight)
	}
	return &Consumer{
		cfg: cfg, reg: partition.NewRegistry(cfg.Client, cfg.Space), budget: lease.NewBudget(cfg.Membership.MaxLeased),
		inFlight: inFlight, pause: run.NewGate(), closing: make(chan struct{}), subs: map[*subscription]struct{}{},
	}
}

// Subscribe joins the group on view v and returns the channel of messages from the
// partitions this member leases; it is closed when ctx is done or the Consumer closes.
func (c *Consumer) Subscribe(ctx context.Context, v keys.View) (<-chan *message.Message, error) {
	if err := c.add(); err != nil {
		return nil, err
	}
	if err := c.Initialize(ctx, v); err != nil {
		c.wg.Done()
		return nil, err
	}
	sub := c.newTrackedSubscription(ctx, v)
	if err := sub.claimName(ctx); err != nil { // a static member's name (StaticMemberGrace)
		c.untrack(sub)
		sub.discard()
		c.wg.Done()
		return nil, err
	}
	go func() {
		defer c.wg.Done()
		sub.run()
		c.untrack(sub)
	}()
	return sub.messages(), nil
}

// Initialize declares the group on v's base topic, creates the topic when the Consumer states
// a partition count and the topic is missing, and creates the group on every partition of
// the topic if it exists. A missing topic with no stated count is left to its creator, who
// creates the declared groups on every partition before anything is appended.
func (c *Consumer) Initialize(ctx context.Context, v keys.View) error {
	if err := c.cfg.Check.Ensure(ctx, c.cfg.Client, c.cfg.Log); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.Name, err)
	}
	if c.cfg.Memory != nil {
		c.cfg.Memory.Start() // once: the first Subscribe or Initialize starts the watch
	}
	// A new subscription is a new intent to consume, after a forced delete as before it.
	if err := c.reg.ClearTombstones(ctx, v.Topic, c.cfg.Group); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.Name, err)
	}
	if !v.DLQ {
		// Declared before looking for the topic: a creator that registers the topic after
		// this sees the declaration; one that registered it before is seen below.
		if err := c.reg.DeclareGroup(ctx, v.Topic, c.cfg.Group, c.cfg.Membership.GroupStartID); err != nil {
			return fmt.Errorf("subscribe to %q: %w", v.Name, err)
		}
	}
	n, err := c.topicCount(ctx, v)
	if err != nil || n == 0 {
		return err
	}
	return createGroups(ctx, &c.cfg, v, 0, n)
}

// topicCount is the partition count of v's topic, creating the topic first when the Consumer
// states a count; 0 when the topic does not exist and no count is stated.
func (c *Consumer) topicCount(ctx context.Context, v keys.View) (int, error) {
	stated := c.cfg.DefaultPartitions
	if stated == 0 {
		m, err := c.reg.Meta(ctx, v.Topic)
		if err != nil || !m.Exists {
			return 0, err
		}
		return m.Count, nil
	}
	t, err := c.reg.RegisterTopic(ctx, v.Topic, stated, nil)
	if err != nil {
		return 0, fmt.Errorf("subscribe to %q: %w", v.Name, err)
	}
	if t.Count != stated {
		if _, logged := c.warned.LoadOrStore(v.Topic, struct{}{}); !logged {
			partition.LogCountDiffers(c.cfg.Log, v.Topic, stated, t.Count)
		}
	}
	return t.Count, partition.CreateDeclaredGroups(ctx, c.cfg.Client, c.cfg.Space, v.Topic, t)
}

// createGroups creates cfg's group on partitions from..to-1 of view v.
func createGroups(ctx context.Context, cfg *Config, v keys.View, from, to int) error {
	streams := make([]string, 0, to-from)
	for p := from; p < to; p++ {
		streams = append(streams, v.Stream(p))
	}
	if err := stream.CreateGroups(ctx, cfg.Client, streams, cfg.Group, cfg.Membership.GroupStartID); err != nil {
		return fmt.Errorf("subscribe to %q: %w", v.Name, err)
	}
	return nil
}

func (c *Consumer) add() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.cfg.Errors.Closed
	}
	c.wg.Add(1)
	return nil
}

// memberName is Member for the first live subscription to a topic and Member-N for further
// ones, so each acts as its own member. The caller holds c.mu.
func (c *Consumer) memberName(topic string) string {
	inUse := map[string]bool{}
	for sub := range c.subs {
		if sub.view.Name == topic {
			inUse[sub.member] = true
		}
	}
	name := c.cfg.Member
	for k := 2; inUse[name]; k++ {
		name = c.cfg.Member + "-" + strconv.Itoa(k)
	}
	return name
}

func (c *Consumer) newTrackedSubscription(ctx context.Context, v keys.View) *subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := newSubscription(ctx, c.shared(), v, c.memberName(v.Name))
	c.subs[sub] = struct{}{}
	return sub
}

// shared is what each subscription shares with the others.
func (c *Consumer) shared() shared {
	return shared{cfg: &c.cfg, reg: c.reg, budget: c.budget, stats: &c.stats, hint: &c.hint, inFlight: c.inFlight,
		pause: c.pause, pressure: c.pressure, full: &c.full, leaveOnClose: &c.leaveOnClose, closing: c.closing}
}

func (c *Consumer) untrack(sub *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, sub)
}

// subscriptions are the running subscriptions.
func (c *Consumer) subscriptions() []*subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	subs := make([]*subscription, 0, len(c.subs))
	for sub := range c.subs {
		subs = append(subs, sub)
	}
	return subs
}

// Close stops every subscription (each drains, flushes and releases, or parks a static
// member's leases) and returns when every goroutine is gone. Idempotent.
func (c *Consumer) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.closing)
	c.mu.Unlock()
	c.wg.Wait()
	if c.cfg.Memory != nil {
		c.cfg.Memory.Stop()
	}
}

// Crash stops every subscription the way a killed process would: no ack flush, no lease
// release, no leave. Tests use it to prove takeover.
func (c *Consumer) Crash() {
	for _, sub := range c.subscriptions() {
		sub.crash()
	}
	c.Close()
}

// LeaveOnClose makes a static member's Close hand its partitions over at once.
func (c *Consumer) LeaveOnClose() { c.leaveOnClose.Store(true) }

// pressure reports whether Redis memory is at or above the high-water mark (false when it is
// not watched).
func (c *Consumer) pressure() bool { return c.cfg.Memory != nil && c.cfg.Memory.Pressure() }

// Pause stops delivery on every subscription until Resume; true when it was not paused.
func (c *Consumer) Pause() bool { return c.setPaused(true, c.cfg.Clock.Now()) }

// Resume ends a Pause; true when it was paused.
func (c *Consumer) Resume() bool { return c.setPaused(false, time.Time{}) }

func (c *Consumer) setPaused(paused bool, since time.Time) bool {
	if !c.pause.Set(paused, since) {
		return false
	}
	for _, sub := range c.subscriptions() {
		sub.reportPause()
	}
	return true
}

// Paused reports whether Pause is in effect.
func (c *Consumer) Paused() bool {
	paused, _ := c.pause.State()
	return paused
}

// InFlight is the number of messages handed to handlers and not yet acked or nacked.
func (c *Consumer) InFlight() int {
	n := int64(0)
	for _, sub := range c.subscriptions() {
		n += sub.outlet.inFlightN.Load()
	}
	return int(n)
}

// Stats returns the Consumer's counters, the partitions waiting out an outage (in topic and
// partition order) and the memory watch's last readings.
func (c *Consumer) Stats() Stats {
	s := Stats{
		Delivered: c.stats.delivered.Load(), Acked: c.stats.acked.Load(), Nacked: c.stats.nacked.Load(),
		Malformed: c.stats.malformed.Load(), DeadLettered: c.stats.deadLettered.Load(),
		PayloadMissing: c.stats.payloadMissing.Load(), LeasesLost: c.stats.leasesLost.Load(),
		TrimmedUnacked: c.stats.trimmedUnacked.Load(),
	}
	for _, sub := range c.subscriptions() {
		s.Outages = append(s.Outages, sub.outages()...)
	}
	slices.SortFunc(s.Outages, func(a, b Outage) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	if c.cfg.Memory != nil {
		s.Memory = c.cfg.Memory.Status()
	}
	return s
}

// marshalOf is how a retry is encoded: cfg.Marshal, or DefaultMarshaler's format.
func marshalOf(cfg *Config) func(topic string, msg *message.Message) (map[string]any, error) {
	if cfg.Marshal != nil {
		return cfg.Marshal
	}
	return func(_ string, msg *message.Message) (map[string]any, error) {
		return codec.Encode(msg.UUID, msg.Metadata, msg.Payload)
	}
}
