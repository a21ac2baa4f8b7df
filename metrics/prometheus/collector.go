package prometheus

import (
	"fmt"
	"strconv"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq"
)

var _ streamq.MetricsCollector = (*Collector)(nil)
var _ streamq.PauseReporter = (*Collector)(nil)
var _ streamq.DuplicateReporter = (*Collector)(nil)
var _ streamq.MemoryReporter = (*Collector)(nil)

var _ streamq.OutageReporter = (*Collector)(nil)

// Collector exports streamq's metrics to Prometheus. Its methods are safe for concurrent
// use and do not allocate once a label set has been seen. One Collector can serve any
// number of Publishers and Subscribers.
type Collector struct {
	vecs          vecs
	produced      cache[topicPartition, *counterSeries]
	duplicates    cache[topicPartition, *counterSeries]
	partitions    cache[streamq.Labels, *partitionSeries]
	subscriptions cache[streamq.Labels, *subscriptionSeries]
	topics        cache[string, *topicSeries]
	trimmed       cache[trimKey, *counterSeries]
	servers       cache[string, *serverSeries]
}

// New builds a Collector and registers its metrics on opts.Registerer. It returns an error,
// and registers nothing, when the options are invalid or a metric of the same name is
// already registered (errors.As with prom.AlreadyRegisteredError tells which: for example
// a second New on the same Registerer and Namespace).
func New(opts Options) (*Collector, error) {
	opts.setDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	v := newVecs(opts.Namespace, opts.Buckets)
	if err := v.register(opts.Registerer); err != nil {
		return nil, err
	}
	c := &Collector{vecs: v}
	c.produced.resolve = v.producedSeries
	c.duplicates.resolve = v.duplicateSeries
	c.partitions.resolve = v.partitionSeries
	c.subscriptions.resolve = v.subscriptionSeries
	c.topics.resolve = v.topicSeries
	c.trimmed.resolve = v.trimmedSeries
	c.servers.resolve = v.serverSeries
	return c, nil
}

// Produced implements streamq.MetricsCollector.
func (c *Collector) Produced(topic string, partition int) {
	c.produced.get(topicPartition{topic, partition}).c.Inc()
}

// DuplicateDropped implements streamq.DuplicateReporter.
func (c *Collector) DuplicateDropped(topic string, partition int) {
	c.duplicates.get(topicPartition{topic, partition}).c.Inc()
}

// Consumed implements streamq.MetricsCollector.
func (c *Collector) Consumed(l streamq.Labels) { c.partitions.get(l).consumed.Inc() }

// Acked implements streamq.MetricsCollector.
func (c *Collector) Acked(l streamq.Labels) { c.partitions.get(l).acked.Inc() }

// Retried implements streamq.MetricsCollector.
func (c *Collector) Retried(l streamq.Labels) { c.partitions.get(l).retried.Inc() }

// DeadLettered implements streamq.MetricsCollector.
func (c *Collector) DeadLettered(l streamq.Labels) { c.partitions.get(l).deadLettered.Inc() }

// PayloadMissing implements streamq.MetricsCollector.
func (c *Collector) PayloadMissing(l streamq.Labels) { c.partitions.get(l).payloadMissing.Inc() }

// DLQDeleted implements streamq.MetricsCollector. n <= 0 is ignored.
func (c *Collector) DLQDeleted(topic string, n int) {
	addCount(c.topics.get(topic).deleted, int64(n))
}

// DLQCleared implements streamq.MetricsCollector. n <= 0 is ignored.
func (c *Collector) DLQCleared(topic string, n int) {
	addCount(c.topics.get(topic).cleared, int64(n))
}

// Trimmed implements streamq.MetricsCollector. n <= 0 is ignored.
func (c *Collector) Trimmed(l streamq.Labels, kind string, n int64) {
	addCount(c.trimmed.get(trimKey{l, kind}).c, n)
}

// InFlight implements streamq.MetricsCollector. l.Partition is ignored.
func (c *Collector) InFlight(l streamq.Labels, n int) { c.subscription(l).inFlight.Set(float64(n)) }

// Paused implements streamq.PauseReporter: the paused_since_seconds gauge is since as Unix
// time, 0 for the zero time (resumed). l.Partition is ignored.
func (c *Collector) Paused(l streamq.Labels, since time.Time) {
	c.subscription(l).pausedSince.Set(unixSeconds(since))
}

// Outage implements streamq.OutageReporter: a partition's outage_since_seconds and
// outage_probes_failed gauges, 0 when it resumed (o.Since zero).
func (c *Collector) Outage(l streamq.Labels, o streamq.PartitionOutage) {
	lv := []string{l.Topic, strconv.Itoa(l.Partition), l.Group, l.Consumer}
	c.vecs.outageSince.WithLabelValues(lv...).Set(unixSeconds(o.Since))
	c.vecs.outageProbes.WithLabelValues(lv...).Set(float64(o.Probes))
}

// unixSeconds is t as Unix time in seconds, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// RedisMemory implements streamq.MemoryReporter: the memory gauges of m's server.
func (c *Collector) RedisMemory(m streamq.ServerMemory) {
	s := c.servers.get(m.Addr)
	s.used.Set(float64(m.Used))
	s.max.Set(float64(m.Max))
	s.high.Set(boolGauge(m.High))
	s.fullSince.Set(unixSeconds(m.FullSince))
}

// EligiblePartitions implements streamq.MetricsCollector. l.Partition is ignored.
func (c *Collector) EligiblePartitions(l streamq.Labels, n int) {
	c.subscription(l).eligible.Set(float64(n))
}

// LeasedPartitions implements streamq.MetricsCollector. l.Partition is ignored.
func (c *Collector) LeasedPartitions(l streamq.Labels, n int) {
	c.subscription(l).leased.Set(float64(n))
}

// MaxLeasedPartitions implements streamq.MetricsCollector. l.Partition is ignored.
func (c *Collector) MaxLeasedPartitions(l streamq.Labels, n int) {
	c.subscription(l).maxLeased.Set(float64(n))
}

// HandleLatency implements streamq.MetricsCollector.
func (c *Collector) HandleLatency(l streamq.Labels, d time.Duration) {
	c.partitions.get(l).handle.Observe(d.Seconds())
}

// BackpressureWait implements streamq.MetricsCollector.
func (c *Collector) BackpressureWait(l streamq.Labels, d time.Duration) {
	c.partitions.get(l).backpressure.Observe(d.Seconds())
}

// DLQReplay implements streamq.MetricsCollector.
func (c *Collector) DLQReplay(topic string, d time.Duration) {
	c.topics.get(topic).replay.Observe(d.Seconds())
}

// subscription returns the gauges of l's member and topic: whatever partition a caller
// passes, the gauges have none.
func (c *Collector) subscription(l streamq.Labels) *subscriptionSeries {
	l.Partition = -1
	return c.subscriptions.get(l)
}

// addCount adds n to a counter; Prometheus counters never go down, so n <= 0 is dropped.
func addCount(c prom.Counter, n int64) {
	if n > 0 {
		c.Add(float64(n))
	}
}
