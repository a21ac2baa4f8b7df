package streamq

import (
	"context"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/consume"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/publish"
)

// The one seam between the API and the engine: each public config group becomes the engine's
// own plain config, MetricsCollector and Tracer become the engine's counters and hooks, and
// the engine's records become public types.

// publishConfig is the engine's config of a Publisher of c (defaulted and valid).
func publishConfig(c PublisherConfig, logger watermill.LoggerAdapter) publish.Config {
	return publish.Config{
		Client:                c.Client,
		Space:                 keys.New(c.Keyspace.StreamPrefix, c.Keyspace.ControlPrefix),
		DefaultPartitionCount: c.DefaultPartitionCount,
		RefreshInterval:       c.Partitioning.RefreshInterval,
		Route:                 router{partitioning: c.Partitioning, byUUID: c.Idempotency.on()}.route,
		Marshal:               marshalFunc(c.Marshaler),
		OffloadThreshold:      c.Payloads.Threshold,
		OffloadTTL:            c.Payloads.TTL,
		Idempotency:           publish.Idempotency{Window: max(c.Idempotency.Window, 0), ByUUID: c.Idempotency.ByUUID},
		Pipeline:              publish.Pipeline{MaxSize: c.Pipeline.MaxSize, Flushers: c.Pipeline.Flushers, QueueSize: c.Pipeline.QueueSize},
		Replicas:              publish.Replicas{N: c.Replication.MinReplicas, Timeout: c.Replication.Timeout},
		Trim: publish.Trim{MaxLen: c.Trim.MaxLen, Exact: c.Trim.Exact, Hard: c.Trim.Policy == TrimHard,
			GroupExpiry: groupExpiryOf(c.Trim.GroupExpiry)},
		Counters: newPublishCounters(c.Metrics),
		Errors:   publish.Errors{Full: redisFullError, NotReplicated: replicationError},
		Check:    health.CheckOf(c.Client),
		Memory:   newMemoryWatch(c.Client, c.Memory, logger, c.Metrics),
		Logger:   logger,
		Clock:    clock.Real(),
	}
}

// marshalFunc is m as the engine takes it: nil for DefaultMarshaler, whose fields the engine
// appends to the XADD in place.
func marshalFunc(m Marshaler) func(topic string, msg *message.Message) (map[string]any, error) {
	if _, ok := m.(DefaultMarshaler); ok {
		return nil
	}
	return m.Marshal
}

// publishCounters are a Publisher's metrics as the engine counts them.
type publishCounters struct {
	m    MetricsCollector
	dups DuplicateReporter // nil: duplicates are not counted
}

func newPublishCounters(m MetricsCollector) *publishCounters {
	dups, _ := m.(DuplicateReporter)
	return &publishCounters{m: m, dups: dups}
}

func (c *publishCounters) Produced(topic string, p int) { c.m.Produced(topic, p) }

func (c *publishCounters) DuplicateDropped(topic string, p int) {
	if c.dups != nil {
		c.dups.DuplicateDropped(topic, p)
	}
}

func (c *publishCounters) Trimmed(topic string, p int, kind string, n int64) {
	trimReporter{c.m, Labels{Topic: topic, Partition: p}}.Trimmed(kind, n)
}

func (c *publishCounters) GroupExpired(topic string, p int, group string) {
	trimReporter{c.m, Labels{Topic: topic, Partition: p}}.GroupExpired(group)
}

// redisFullError is the ErrRedisFull of a write Redis refused at maxmemory with err.
func redisFullError(f publish.FullInfo, err error) error {
	return &RedisFullError{Topic: f.Topic, Partition: f.Partition, Server: f.Server, UsedMemory: f.UsedMemory,
		MaxMemory: f.MaxMemory, Err: err}
}

// replicationError is the ErrNotReplicated of a pipeline whose WAIT for want counted acked
// replicas, or failed with err.
func replicationError(want publish.Replicas, acked int, err error) error {
	if err != nil {
		return fmt.Errorf("%w: WAIT %d %d: %w", ErrNotReplicated, want.N, want.Timeout.Milliseconds(), err)
	}
	return &ReplicationError{Wanted: want.N, Acked: acked, Timeout: want.Timeout}
}

// newMemoryWatch is the memory watch of a Publisher or Subscriber (nil when Memory.Interval is
// -1); metrics that implement MemoryReporter get every reading.
func newMemoryWatch(rdb redis.UniversalClient, cfg MemoryWatch, log watermill.LoggerAdapter, metrics MetricsCollector) *health.Watch {
	if !cfg.watched() {
		return nil
	}
	var report func(health.Reading)
	if r, ok := metrics.(MemoryReporter); ok {
		report = func(m health.Reading) { r.RedisMemory(serverMemoryOf(m)) }
	}
	return health.NewWatch(rdb, health.WatchConfig{HighWater: cfg.mark(), Interval: cfg.Interval}, log, clock.Real(), report)
}

// serverMemoryOf is a memory reading as the API shows it.
func serverMemoryOf(m health.Reading) ServerMemory {
	return ServerMemory{Addr: m.Addr, Used: m.Used, Max: m.Max, High: m.High, FullSince: m.FullSince}
}

// trimReporter counts one partition's trims in the metrics (labels l) and its group expiries
// in a GroupExpiryReporter.
type trimReporter struct {
	m MetricsCollector
	l Labels
}

func (r trimReporter) Trimmed(kind string, n int64) { r.m.Trimmed(r.l, kind, n) }

func (r trimReporter) GroupExpired(group string) {
	if g, ok := r.m.(GroupExpiryReporter); ok {
		g.GroupExpired(Labels{Topic: r.l.Topic, Partition: r.l.Partition, Group: group})
	}
}

// consumeConfig is the engine's config of a Subscriber: every group of config, already
// defaulted, mapped onto the engine's plain values in one place.
func consumeConfig(c SubscriberConfig, space keys.Space, log watermill.LoggerAdapter) consume.Config {
	m, r := c.Membership, c.Retry
	cfg := consume.Config{
		Client: c.Client, Space: space, Group: c.ConsumerGroup, Member: m.ConsumerName,
		DefaultPartitions: c.DefaultPartitionCount,
		Membership: consume.Membership{LeaseTTL: m.LeaseTTL, RenewInterval: m.RenewInterval, RebalanceInterval: m.RebalanceInterval,
			PartitionRefreshInterval: m.PartitionRefreshInterval, GroupStartID: m.GroupStartID, StaticMemberGrace: m.StaticMemberGrace,
			MaxLeased: m.MaxLeasedPartitions},
		Read: func(topic string) consume.Read {
			r := c.readFor(topic)
			return consume.Read{BatchCount: r.BatchCount, BlockTime: r.BlockTime, Modulo: r.PartitionModulo, Remainder: r.PartitionRemainder}
		},
		Reclaim: consume.Reclaim{ScanInterval: c.Reclaim.ScanInterval, Idle: c.Reclaim.Idle, BatchSize: c.Reclaim.BatchSize},
		Dispatch: consume.Dispatch{MaxInFlightPerPartition: c.Delivery.MaxInFlightPerPartition, OrderByKey: c.Delivery.OrderByKey,
			PartitionKey: c.Delivery.PartitionKey, MaxInFlight: c.Delivery.MaxInFlight, CloseTimeout: c.Delivery.CloseTimeout},
		Acks: consume.Acks{BatchSize: c.Acks.BatchSize, FlushInterval: c.Acks.FlushInterval,
			DeletePolicy: string(c.Acks.DeletePolicy), SetTTL: c.Acks.SetTTL},
		Retry: consume.Retry{Backoff: r.Policy, MaxRetries: r.MaxRetries, MaxSnoozes: r.MaxSnoozes,
			OutageAfter: r.Outage.After, OutageBackoff: r.Outage.Backoff, OutageMaxBackoff: r.Outage.MaxBackoff,
			MoverInterval: r.MoverInterval, MoverBatch: r.MoverBatch},
		Retention: consume.Retention{MaxAge: c.Retention.MaxAge, Hard: c.Retention.Policy == TrimHard,
			GroupExpiry: max(c.Retention.GroupExpiry, 0), TrimInterval: c.Retention.TrimInterval,
			DLQMaxAge: c.Retention.DLQMaxAge, DLQMaxLen: c.Retention.DLQMaxLen},
		Payloads: consume.Payloads{Threshold: c.Payloads.Threshold, TTL: c.Payloads.TTL},
		Errors:   consume.Errors{Closed: ErrSubscriberClosed, NameInUse: ErrConsumerNameInUse},
		Metrics:  boundMetrics{c.Metrics},
		Memory:   newMemoryWatch(c.Client, c.Memory, log, c.Metrics),
		Check:    health.CheckOf(c.Client),
		Clock:    clock.Real(),
		Log:      log,
	}
	if _, ok := c.Unmarshaler.(DefaultMarshaler); !ok {
		cfg.Unmarshal = c.Unmarshaler.Unmarshal
	}
	if _, ok := c.Marshaler.(DefaultMarshaler); !ok {
		cfg.Marshal = c.Marshaler.Marshal
	}
	if c.Tracer != nil {
		cfg.Hooks = tracerHooks{c.Tracer}
	}
	return cfg
}

// subscriberStatsOf is the engine's Stats as the API shows them.
func subscriberStatsOf(s consume.Stats) SubscriberStats {
	out := SubscriberStats{
		Delivered: s.Delivered, Acked: s.Acked, Nacked: s.Nacked, Malformed: s.Malformed, DeadLettered: s.DeadLettered,
		PayloadMissing: s.PayloadMissing, LeasesLost: s.LeasesLost, TrimmedUnacked: s.TrimmedUnacked,
	}
	for _, m := range s.Memory {
		out.Memory = append(out.Memory, serverMemoryOf(m))
	}
	for _, o := range s.Outages {
		out.Outages = append(out.Outages, outageOf(o))
	}
	return out
}

// outageOf is a partition's outage as the API shows it.
func outageOf(o consume.Outage) PartitionOutage {
	return PartitionOutage{Topic: o.Topic, Partition: o.Partition, Since: o.Since, NextProbe: o.NextProbe, Probes: o.Probes, Reason: o.Reason}
}

// boundMetrics binds a MetricsCollector, and the optional reporters it implements, to the
// labels of a subscription or one of its partitions.
type boundMetrics struct{ m MetricsCollector }

func (b boundMetrics) Bind(l consume.Labels) consume.Counters {
	c := &counters{m: b.m, l: Labels{Topic: l.Topic, Partition: l.Partition, Group: l.Group, Consumer: l.Consumer}}
	c.outages, _ = b.m.(OutageReporter)
	c.pauses, _ = b.m.(PauseReporter)
	c.forgets, _ = b.m.(MetricsForgetter)
	c.expiries, _ = b.m.(GroupExpiryReporter)
	return c
}

// counters are a MetricsCollector bound to one subscription's or partition's labels.
type counters struct {
	m        MetricsCollector
	l        Labels
	outages  OutageReporter // the optional reporters; nil when not implemented
	pauses   PauseReporter
	forgets  MetricsForgetter
	expiries GroupExpiryReporter
}

func (c *counters) Consumed()                        { c.m.Consumed(c.l) }
func (c *counters) Acked()                           { c.m.Acked(c.l) }
func (c *counters) Retried()                         { c.m.Retried(c.l) }
func (c *counters) DeadLettered()                    { c.m.DeadLettered(c.l) }
func (c *counters) PayloadMissing()                  { c.m.PayloadMissing(c.l) }
func (c *counters) HandleLatency(d time.Duration)    { c.m.HandleLatency(c.l, d) }
func (c *counters) BackpressureWait(d time.Duration) { c.m.BackpressureWait(c.l, d) }
func (c *counters) InFlight(n int)                   { c.m.InFlight(c.l, n) }
func (c *counters) DLQReplay(d time.Duration)        { c.m.DLQReplay(c.l.Topic, d) }
func (c *counters) DLQDeleted(n int)                 { c.m.DLQDeleted(c.l.Topic, n) }
func (c *counters) Trimmed(kind string, n int64)     { c.m.Trimmed(c.l, kind, n) }
func (c *counters) EligiblePartitions(n int)         { c.m.EligiblePartitions(c.l, n) }
func (c *counters) LeasedPartitions(n int)           { c.m.LeasedPartitions(c.l, n) }
func (c *counters) MaxLeasedPartitions(n int)        { c.m.MaxLeasedPartitions(c.l, n) }

func (c *counters) GroupExpired(group string) {
	if c.expiries != nil {
		c.expiries.GroupExpired(Labels{Topic: c.l.Topic, Partition: c.l.Partition, Group: group})
	}
}

func (c *counters) Outage(o consume.Outage) {
	if c.outages != nil {
		c.outages.Outage(c.l, outageOf(o))
	}
}

func (c *counters) Paused(since time.Time) {
	if c.pauses != nil {
		c.pauses.Paused(c.l, since)
	}
}

func (c *counters) Forget() {
	if c.forgets != nil {
		c.forgets.Forget(c.l)
	}
}

// tracerHooks are a Tracer as the engine's hooks.
type tracerHooks struct{ t Tracer }

func (h tracerHooks) StartDelivery(ctx context.Context, msg *message.Message, d *consume.Delivery) (context.Context, func(consume.Outcome)) {
	info := DeliveryInfo{Topic: d.Topic, Partition: d.Partition, StreamID: d.StreamID, OriginalID: d.OriginalID,
		ConsumerGroup: d.Group, Consumer: d.Consumer, DeliveryCount: d.Count, RetryCount: d.Retries}
	if d.Letter != nil {
		l := letterOf(d)
		info.DeadLetter = &l
	}
	ctx, end := h.t.StartDelivery(ctx, msg, info)
	return ctx, func(out consume.Outcome) { end(deliveryOutcomes[out]) }
}

// deliveryOutcomes are the engine's outcomes of a delivery as a Tracer sees them.
var deliveryOutcomes = [...]DeliveryOutcome{consume.OutcomeAcked: DeliveryAcked, consume.OutcomeNacked: DeliveryNacked,
	consume.OutcomeDeferred: DeliveryDeferred, consume.OutcomeStopped: DeliveryStopped}

// settleSteps are the engine's steps as a Tracer sees them.
var settleSteps = [...]SettleStep{consume.StepRetry: SettleRetry, consume.StepDeadLetter: SettleDeadLetter,
	consume.StepReplay: SettleReplay, consume.StepDrop: SettleDrop}

func (h tracerHooks) StartSettle(msg *message.Message, s consume.Settlement) func(ok bool) {
	return h.t.StartSettle(msg, Settlement{Step: settleSteps[s.Step], Topic: s.Topic, Partition: s.Partition,
		ConsumerGroup: s.Group, StreamID: s.StreamID, Reason: s.Reason, Retry: s.Retry, Due: s.Due})
}
