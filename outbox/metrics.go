package outbox

import (
	"errors"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq"
)

// publishBuckets are the buckets, in seconds, of streamq_outbox_publish_seconds: a relay
// publish is one Redis round trip, from 100 µs, up to a minute of retries on an outage.
var publishBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// metrics are one relay's Prometheus series, all labelled outbox=Name.
type metrics struct {
	pending, oldest prom.Gauge
	moved, failed   prom.Counter
	dropped         prom.Counter
	publish         prom.Observer
}

// newMetrics registers the outbox metrics on reg (nil: series kept but not exported) and
// returns the series of outbox name. Vectors another relay registered on reg are shared.
func newMetrics(reg prom.Registerer, name string) (*metrics, error) {
	if reg == nil {
		reg = prom.NewRegistry()
	}
	l := []string{"outbox"}
	pending, err1 := register(reg, prom.NewGaugeVec(prom.GaugeOpts{Name: "streamq_outbox_pending_rows",
		Help: "Rows of the outbox table not moved into streamq yet, as last measured."}, l))
	oldest, err2 := register(reg, prom.NewGaugeVec(prom.GaugeOpts{Name: "streamq_outbox_oldest_age_seconds",
		Help: "Age of the oldest row not moved yet (0 when none waits), as last measured."}, l))
	moved, err3 := register(reg, prom.NewCounterVec(prom.CounterOpts{Name: "streamq_outbox_moved_total",
		Help: "Messages this relay published into streamq."}, l))
	failed, err4 := register(reg, prom.NewCounterVec(prom.CounterOpts{Name: "streamq_outbox_publish_errors_total",
		Help: "Publishes into streamq that failed (the message is published again after ResendInterval)."}, l))
	publish, err5 := register(reg, prom.NewHistogramVec(prom.HistogramOpts{Name: "streamq_outbox_publish_seconds",
		Help: "Time of one relay publish into streamq.", Buckets: publishBuckets}, l))
	dropped, err6 := register(reg, prom.NewCounterVec(prom.CounterOpts{Name: "streamq_outbox_duplicates_dropped_total",
		Help: "Messages the relay published again (rows moved again after a relay stopped) that streamq's idempotent append did not append twice."}, l))
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	return &metrics{pending: pending.WithLabelValues(name), oldest: oldest.WithLabelValues(name),
		moved: moved.WithLabelValues(name), failed: failed.WithLabelValues(name),
		publish: publish.WithLabelValues(name), dropped: dropped.WithLabelValues(name)}, nil
}

// register registers c on reg, or returns the equal collector registered before.
func register[C prom.Collector](reg prom.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var already prom.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// published records one relay publish of n messages.
func (m *metrics) published(d time.Duration, n int, err error) {
	m.publish.Observe(d.Seconds())
	if err != nil {
		m.failed.Inc()
		return
	}
	m.moved.Add(float64(n))
}

// measured records a lag measurement.
func (m *metrics) measured(l Lag) {
	m.pending.Set(float64(l.Pending))
	m.oldest.Set(l.OldestAge.Seconds())
}

// dupMetrics is the relay Publisher's MetricsCollector: the caller's (Publisher.Metrics, or
// none), plus the relay's count of the messages streamq's idempotent append dropped.
type dupMetrics struct {
	streamq.MetricsCollector
	dropped prom.Counter
}

var _ streamq.DuplicateReporter = dupMetrics{}

// DuplicateDropped counts a dropped duplicate, and passes it on to the caller's collector.
func (d dupMetrics) DuplicateDropped(topic string, partition int) {
	d.dropped.Inc()
	if r, ok := d.MetricsCollector.(streamq.DuplicateReporter); ok {
		r.DuplicateDropped(topic, partition)
	}
}
