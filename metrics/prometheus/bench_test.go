package prometheus_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/metrics/prometheus"
)

// Each benchmark calls through the streamq.MetricsCollector interface, as the subscriber
// does, from parallel goroutines that each stand for one partition worker (own labels).

func benchCollector(b *testing.B) streamq.MetricsCollector {
	b.Helper()
	c, err := prometheus.New(prometheus.Options{Registerer: prom.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchParallel(b *testing.B, m streamq.MetricsCollector, call func(streamq.MetricsCollector, streamq.Labels)) {
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		l := streamq.Labels{Topic: "orders", Partition: int(next.Add(1)), Group: "payments", Consumer: "host-1"}
		for pb.Next() {
			call(m, l)
		}
	})
}

func consumed(m streamq.MetricsCollector, l streamq.Labels) { m.Consumed(l) }
func acked(m streamq.MetricsCollector, l streamq.Labels)    { m.Acked(l) }
func handled(m streamq.MetricsCollector, l streamq.Labels) {
	m.HandleLatency(l, 3*time.Millisecond)
}

func BenchmarkCollectorConsumed(b *testing.B)      { benchParallel(b, benchCollector(b), consumed) }
func BenchmarkCollectorAcked(b *testing.B)         { benchParallel(b, benchCollector(b), acked) }
func BenchmarkCollectorHandleLatency(b *testing.B) { benchParallel(b, benchCollector(b), handled) }

func BenchmarkNoopConsumed(b *testing.B)      { benchParallel(b, streamq.NoopMetrics{}, consumed) }
func BenchmarkNoopAcked(b *testing.B)         { benchParallel(b, streamq.NoopMetrics{}, acked) }
func BenchmarkNoopHandleLatency(b *testing.B) { benchParallel(b, streamq.NoopMetrics{}, handled) }

// BenchmarkWithLabelValuesConsumed is the uncached baseline: resolving the labels on
// every call, as a collector without the cache would.
func BenchmarkWithLabelValuesConsumed(b *testing.B) {
	vec := prom.NewCounterVec(prom.CounterOpts{Name: "consumed_total"}, []string{"topic", "partition", "group", "consumer"})
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		l := streamq.Labels{Topic: "orders", Partition: int(next.Add(1)), Group: "payments", Consumer: "host-1"}
		for pb.Next() {
			vec.WithLabelValues(l.Topic, strconv.Itoa(l.Partition), l.Group, l.Consumer).Inc()
		}
	})
}
