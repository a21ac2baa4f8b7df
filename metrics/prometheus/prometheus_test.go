package prometheus_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/metrics/prometheus"
)

var (
	ordersP0  = streamq.Labels{Topic: "orders", Partition: 0, Group: "g", Consumer: "c1"}
	ordersP1  = streamq.Labels{Topic: "orders", Partition: 1, Group: "g", Consumer: "c1"}
	refundsP0 = streamq.Labels{Topic: "refunds", Partition: 0, Group: "h", Consumer: "c2"}
	ordersSub = streamq.Labels{Topic: "orders", Partition: -1, Group: "g", Consumer: "c1"}
)

// newCollector builds a Collector on a fresh registry, with two histogram buckets.
func newCollector(t testing.TB) (*prometheus.Collector, *prom.Registry) {
	t.Helper()
	reg := prom.NewRegistry()
	c, err := prometheus.New(prometheus.Options{Registerer: reg, Buckets: []float64{0.1, 1}})
	require.NoError(t, err)
	return c, reg
}

// record calls every method of the collector with a few label sets.
func record(c streamq.MetricsCollector) {
	c.Produced("orders", 0)
	c.Produced("orders", 0)
	c.Produced("orders", 1)
	if d, ok := c.(streamq.DuplicateReporter); ok {
		d.DuplicateDropped("orders", 1)
	}
	if e, ok := c.(streamq.GroupExpiryReporter); ok {
		e.GroupExpired(streamq.Labels{Topic: "orders", Partition: 1, Group: "forgotten"})
	}
	for range 3 {
		c.Consumed(ordersP0)
	}
	c.Consumed(ordersP1)
	c.Consumed(refundsP0)
	c.Acked(ordersP0)
	c.Acked(ordersP0)
	c.Acked(refundsP0)
	c.Retried(ordersP0)
	c.DeadLettered(ordersP1)
	c.PayloadMissing(refundsP0)
	c.DLQDeleted("orders", 3)
	c.DLQDeleted("orders", 0)  // ignored
	c.DLQDeleted("orders", -1) // ignored: counters never go down
	c.DLQCleared("orders", 10)
	c.Trimmed(ordersP0, "age", 5)
	c.Trimmed(ordersP0, "dlq-length", 2)
	c.Trimmed(ordersP0, "age", 1)
	c.InFlight(ordersSub, 3)
	c.InFlight(ordersSub, 1)
	c.InFlight(ordersP0, 2) // a partition passed to a gauge is dropped
	c.EligiblePartitions(ordersSub, 4)
	c.LeasedPartitions(ordersSub, 2)
	c.MaxLeasedPartitions(ordersSub, 0)
	c.HandleLatency(ordersP0, 50*time.Millisecond)
	c.HandleLatency(ordersP0, 2*time.Second)
	c.BackpressureWait(ordersP1, 10*time.Millisecond)
	c.DLQReplay("orders", 300*time.Millisecond)
	if r, ok := c.(streamq.PauseReporter); ok {
		r.Paused(ordersSub, time.Unix(1_700_000_000, 500_000_000))
		r.Paused(ordersSub, time.Time{}) // resumed
		r.Paused(ordersSub, time.Unix(1_700_000_100, 0))
	}
	if r, ok := c.(streamq.OutageReporter); ok {
		r.Outage(ordersP0, streamq.PartitionOutage{Since: time.Unix(1_700_000_300, 0), Probes: 2})
		r.Outage(ordersP1, streamq.PartitionOutage{Since: time.Unix(1_700_000_400, 0)})
		r.Outage(ordersP1, streamq.PartitionOutage{}) // resumed
	}
	if r, ok := c.(streamq.MemoryReporter); ok {
		r.RedisMemory(streamq.ServerMemory{Addr: "10.0.0.1:6379", Used: 30 << 20, Max: 40 << 20})
		r.RedisMemory(streamq.ServerMemory{Addr: "10.0.0.1:6379", Used: 39 << 20, Max: 40 << 20, High: true})
		r.RedisMemory(streamq.ServerMemory{Addr: "10.0.0.2:6379", Used: 40 << 20, Max: 40 << 20, High: true, FullSince: time.Unix(1_700_000_200, 0)})
	}
}

const (
	p0  = `{consumer="c1",group="g",partition="0",topic="orders"}`
	p1  = `{consumer="c1",group="g",partition="1",topic="orders"}`
	r0  = `{consumer="c2",group="h",partition="0",topic="refunds"}`
	sub = `{consumer="c1",group="g",topic="orders"}`
)

func TestCollectorExportsEveryMetric(t *testing.T) {
	c, reg := newCollector(t)
	record(c)
	got := samples(t, reg)

	want := map[string]float64{
		`streamq_produced_total{partition="0",topic="orders"}`:                                          2,
		`streamq_produced_total{partition="1",topic="orders"}`:                                          1,
		`streamq_publish_duplicates_total{partition="1",topic="orders"}`:                                1,
		`streamq_group_expired_total{group="forgotten",partition="1",topic="orders"}`:                   1,
		`streamq_consumed_total` + p0:                                                                   3,
		`streamq_consumed_total` + p1:                                                                   1,
		`streamq_consumed_total` + r0:                                                                   1,
		`streamq_acked_total` + p0:                                                                      2,
		`streamq_acked_total` + r0:                                                                      1,
		`streamq_retried_total` + p0:                                                                    1,
		`streamq_dead_lettered_total` + p1:                                                              1,
		`streamq_payload_missing_total` + r0:                                                            1,
		`streamq_dlq_deleted_total{topic="orders"}`:                                                     3,
		`streamq_dlq_cleared_total{topic="orders"}`:                                                     10,
		`streamq_trimmed_total{consumer="c1",group="g",kind="age",partition="0",topic="orders"}`:        6,
		`streamq_trimmed_total{consumer="c1",group="g",kind="dlq-length",partition="0",topic="orders"}`: 2,
		`streamq_in_flight` + sub:                                                                       2,
		`streamq_eligible_partitions` + sub:                                                             4,
		`streamq_leased_partitions` + sub:                                                               2,
		`streamq_max_leased_partitions` + sub:                                                           0,
		`streamq_paused_since_seconds` + sub:                                                            1_700_000_100,
		`streamq_outage_since_seconds` + p0:                                                             1_700_000_300,
		`streamq_outage_probes_failed` + p0:                                                             2,
		`streamq_outage_since_seconds` + p1:                                                             0,
		`streamq_outage_probes_failed` + p1:                                                             0,
		`streamq_redis_used_memory_bytes{server="10.0.0.1:6379"}`:                                       39 << 20,
		`streamq_redis_max_memory_bytes{server="10.0.0.1:6379"}`:                                        40 << 20,
		`streamq_redis_memory_high{server="10.0.0.1:6379"}`:                                             1,
		`streamq_redis_used_memory_bytes{server="10.0.0.2:6379"}`:                                       40 << 20,
		`streamq_redis_max_memory_bytes{server="10.0.0.2:6379"}`:                                        40 << 20,
		`streamq_redis_memory_high{server="10.0.0.2:6379"}`:                                             1,
		`streamq_redis_full_since_seconds{server="10.0.0.2:6379"}`:                                      1_700_000_200,
		`streamq_handle_seconds_count` + p0:                                                             2,
		`streamq_handle_seconds_sum` + p0:                                                               2.05,
		`streamq_handle_seconds_bucket` + withLE(p0, "0.1"):                                             1,
		`streamq_handle_seconds_bucket` + withLE(p0, "1"):                                               1,
		`streamq_handle_seconds_bucket` + withLE(p0, "+Inf"):                                            2,
		`streamq_backpressure_wait_seconds_count` + p1:                                                  1,
		`streamq_backpressure_wait_seconds_sum` + p1:                                                    0.01,
		`streamq_backpressure_wait_seconds_bucket` + withLE(p1, "0.1"):                                  1,
		`streamq_backpressure_wait_seconds_bucket` + withLE(p1, "1"):                                    1,
		`streamq_backpressure_wait_seconds_bucket` + withLE(p1, "+Inf"):                                 1,
		`streamq_dlq_replay_seconds_count{topic="orders"}`:                                              1,
		`streamq_dlq_replay_seconds_sum{topic="orders"}`:                                                0.3,
		`streamq_dlq_replay_seconds_bucket{le="0.1",topic="orders"}`:                                    0,
		`streamq_dlq_replay_seconds_bucket{le="1",topic="orders"}`:                                      1,
		`streamq_dlq_replay_seconds_bucket{le="+Inf",topic="orders"}`:                                   1,
	}
	for series, v := range want {
		if assert.Contains(t, got, series) {
			assert.InDelta(t, v, got[series], 1e-9, series)
		}
	}
	for series, v := range got {
		if _, ok := want[series]; !ok {
			assert.Zero(t, v, "series %s is not expected to be touched", series)
		}
	}
}

// TestCollectorSeriesPerFamily checks the label sets: every label set seen creates the
// series of its family group at zero, and the gauges have no partition.
func TestCollectorSeriesPerFamily(t *testing.T) {
	c, reg := newCollector(t)
	record(c)
	tests := []struct {
		family string
		labels []string
		series int
	}{
		{"streamq_produced_total", []string{"partition", "topic"}, 2},
		{"streamq_publish_duplicates_total", []string{"partition", "topic"}, 1},
		{"streamq_consumed_total", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_acked_total", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_retried_total", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_dead_lettered_total", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_payload_missing_total", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_dlq_deleted_total", []string{"topic"}, 1},
		{"streamq_dlq_cleared_total", []string{"topic"}, 1},
		{"streamq_trimmed_total", []string{"consumer", "group", "kind", "partition", "topic"}, 2},
		{"streamq_group_expired_total", []string{"group", "partition", "topic"}, 1},
		{"streamq_in_flight", []string{"consumer", "group", "topic"}, 1},
		{"streamq_eligible_partitions", []string{"consumer", "group", "topic"}, 1},
		{"streamq_leased_partitions", []string{"consumer", "group", "topic"}, 1},
		{"streamq_max_leased_partitions", []string{"consumer", "group", "topic"}, 1},
		{"streamq_paused_since_seconds", []string{"consumer", "group", "topic"}, 1},
		{"streamq_outage_since_seconds", []string{"consumer", "group", "partition", "topic"}, 2},
		{"streamq_outage_probes_failed", []string{"consumer", "group", "partition", "topic"}, 2},
		{"streamq_redis_used_memory_bytes", []string{"server"}, 2},
		{"streamq_redis_max_memory_bytes", []string{"server"}, 2},
		{"streamq_redis_memory_high", []string{"server"}, 2},
		{"streamq_redis_full_since_seconds", []string{"server"}, 2},
		{"streamq_handle_seconds", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_backpressure_wait_seconds", []string{"consumer", "group", "partition", "topic"}, 3},
		{"streamq_dlq_replay_seconds", []string{"topic"}, 1},
	}
	families := gather(t, reg)
	require.Len(t, families, len(tests), "one family per documented metric")
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			mf, ok := families[tt.family]
			require.True(t, ok, "family %s not exported", tt.family)
			assert.NotEmpty(t, mf.GetHelp())
			assert.Len(t, mf.GetMetric(), tt.series)
			for _, m := range mf.GetMetric() {
				assert.Equal(t, tt.labels, labelNames(m))
			}
			n, err := testutil.GatherAndCount(reg, tt.family)
			require.NoError(t, err)
			assert.Equal(t, tt.series, n)
		})
	}
}

func TestCollectorConcurrentCallsGiveExactTotals(t *testing.T) {
	c, reg := newCollector(t)
	const goroutines, calls = 32, 500
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := streamq.Labels{Topic: "orders", Partition: g % 4, Group: "g", Consumer: "c1"}
			<-start // every goroutine races for the first use of the shared label sets
			for range calls {
				c.Produced("orders", g%4)
				c.Consumed(ordersP0)
				c.Acked(own)
				c.HandleLatency(own, time.Millisecond)
				c.Trimmed(ordersP0, "age", 2)
				c.DLQDeleted("orders", 1)
			}
		}()
	}
	close(start)
	wg.Wait()

	got := samples(t, reg)
	assert.Equal(t, float64(goroutines*calls), got[`streamq_consumed_total`+p0])
	assert.Equal(t, float64(2*goroutines*calls), got[`streamq_trimmed_total{consumer="c1",group="g",kind="age",partition="0",topic="orders"}`])
	assert.Equal(t, float64(goroutines*calls), got[`streamq_dlq_deleted_total{topic="orders"}`])
	perPartition := float64(goroutines / 4 * calls)
	for p := range 4 {
		l := fmt.Sprintf(`{consumer="c1",group="g",partition="%d",topic="orders"}`, p)
		assert.Equal(t, perPartition, got[fmt.Sprintf(`streamq_produced_total{partition="%d",topic="orders"}`, p)])
		assert.Equal(t, perPartition, got[`streamq_acked_total`+l])
		assert.Equal(t, perPartition, got[`streamq_handle_seconds_count`+l])
	}
}

func TestNewTwiceOnOneRegistryReturnsAlreadyRegistered(t *testing.T) {
	_, reg := newCollector(t)
	_, err := prometheus.New(prometheus.Options{Registerer: reg})
	require.Error(t, err)
	var already prom.AlreadyRegisteredError
	assert.ErrorAs(t, err, &already)

	_, err = prometheus.New(prometheus.Options{Registerer: reg, Namespace: "other"})
	assert.NoError(t, err, "another namespace does not clash")
}

// TestNewRegistersAllOrNothing: a clash in the middle of the families unregisters the
// ones registered before it, so a later New on the same registry can succeed.
func TestNewRegistersAllOrNothing(t *testing.T) {
	reg := prom.NewRegistry()
	clash := prom.NewGaugeVec(prom.GaugeOpts{Name: "streamq_in_flight", Help: "Unacked messages of a subscription."},
		[]string{"topic", "group", "consumer"})
	require.NoError(t, reg.Register(clash))

	_, err := prometheus.New(prometheus.Options{Registerer: reg})
	var already prom.AlreadyRegisteredError
	require.ErrorAs(t, err, &already)
	assert.Contains(t, err.Error(), "register streamq_in_flight:")

	require.True(t, reg.Unregister(clash))
	_, err = prometheus.New(prometheus.Options{Registerer: reg})
	assert.NoError(t, err, "streamq_produced_total and the others before the clash were unregistered")
}

func TestNewRejectsInvalidBuckets(t *testing.T) {
	tests := []struct {
		name    string
		buckets []float64
	}{
		{"decreasing", []float64{1, 0.5}},
		{"duplicate", []float64{0.1, 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prom.NewRegistry()
			_, err := prometheus.New(prometheus.Options{Registerer: reg, Buckets: tt.buckets})
			assert.ErrorIs(t, err, prometheus.ErrInvalidBuckets)
			assert.Empty(t, gather(t, reg))
		})
	}
}

func TestNewNamespace(t *testing.T) {
	reg := prom.NewRegistry()
	c, err := prometheus.New(prometheus.Options{Registerer: reg, Namespace: "billing"})
	require.NoError(t, err)
	c.Acked(ordersP0)
	assert.Equal(t, 1.0, samples(t, reg)[`billing_acked_total`+p0])
}

func TestDefaultBucketsCoverMillisecondsToSeconds(t *testing.T) {
	b := prometheus.DefaultBuckets
	assert.Equal(t, 0.001, b[0])
	assert.GreaterOrEqual(t, b[len(b)-1], 10.0)
	assert.True(t, sort.Float64sAreSorted(b))
}

// gather returns the registry's families by name.
func gather(t testing.TB, g prom.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	out := make(map[string]*dto.MetricFamily, len(mfs))
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// samples flattens the registry into `name{label="value",...}` -> value, labels sorted by
// name; a histogram gives _count, _sum and one _bucket per upper bound.
func samples(t testing.TB, g prom.Gatherer) map[string]float64 {
	t.Helper()
	out, err := flatten(g)
	require.NoError(t, err)
	return out
}

func flatten(g prom.Gatherer) (map[string]float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			addSamples(out, mf.GetName(), m)
		}
	}
	return out, nil
}

func addSamples(out map[string]float64, name string, m *dto.Metric) {
	ls := labelPairs(m)
	switch {
	case m.Counter != nil:
		out[name+ls] = m.GetCounter().GetValue()
	case m.Gauge != nil:
		out[name+ls] = m.GetGauge().GetValue()
	case m.Histogram != nil:
		h := m.GetHistogram()
		out[name+"_count"+ls] = float64(h.GetSampleCount())
		out[name+"_sum"+ls] = h.GetSampleSum()
		for _, b := range h.GetBucket() {
			out[name+"_bucket"+withLE(ls, strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))] = float64(b.GetCumulativeCount())
		}
		out[name+"_bucket"+withLE(ls, "+Inf")] = float64(h.GetSampleCount())
	}
}

func labelNames(m *dto.Metric) []string {
	var names []string
	for _, lp := range m.GetLabel() {
		names = append(names, lp.GetName())
	}
	return names
}

func labelPairs(m *dto.Metric) string {
	var parts []string
	for _, lp := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// withLE inserts le="v" into a label string from labelPairs, keeping the names sorted.
func withLE(labels, v string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(labels, "{"), "}")
	parts := strings.Split(inner, ",")
	le := fmt.Sprintf("le=%q", v)
	i := sort.SearchStrings(parts, le)
	parts = append(parts[:i], append([]string{le}, parts[i:]...)...)
	return "{" + strings.Join(parts, ",") + "}"
}
