package prometheus

import (
	"context"
	"strconv"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq/admin"
)

// LagTarget is one consumer group of one topic whose lag is exported.
type LagTarget struct{ Topic, Group string }

// LagCollector exports consumer lag from admin on every scrape, for dashboards and
// autoscalers (KEDA's Prometheus scaler can scale a group on streamq_lag):
//
//	| metric                      | type  | labels                  |
//	|-----------------------------|-------|-------------------------|
//	| streamq_lag                 | gauge | topic, group, partition |
//	| streamq_pending             | gauge | topic, group, partition |
//	| streamq_lag_seconds         | gauge | topic, group, partition |
//	| streamq_lag_scrape_errors   | gauge | topic, group            |
//
// streamq_lag is a message count (Redis 7 XINFO GROUPS lag, counted when Redis does not
// know it); streamq_lag_seconds is the seed's time lag (newest entry minus last delivered).
type LagCollector struct {
	adm     *admin.Admin
	targets []LagTarget
	timeout time.Duration
	lag     *prom.Desc
	pending *prom.Desc
	seconds *prom.Desc
	errors  *prom.Desc
}

var _ prom.Collector = (*LagCollector)(nil)

// NewLagCollector returns a collector of targets' lag, read through adm with timeout per
// scrape (0: 5 s). Register it on a registry; it reads Redis only when scraped.
func NewLagCollector(adm *admin.Admin, namespace string, timeout time.Duration, targets ...LagTarget) *LagCollector {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	part := []string{"topic", "group", "partition"}
	return &LagCollector{
		adm: adm, targets: targets, timeout: timeout,
		lag:     prom.NewDesc(namespace+"_lag", "Entries of the partition not yet delivered to the group.", part, nil),
		pending: prom.NewDesc(namespace+"_pending", "Entries delivered to the group and not acked.", part, nil),
		seconds: prom.NewDesc(namespace+"_lag_seconds", "Age of the newest entry minus that of the last delivered one.", part, nil),
		errors:  prom.NewDesc(namespace+"_lag_scrape_errors", "1 when the last scrape of this group failed.", []string{"topic", "group"}, nil),
	}
}

// Describe implements prom.Collector.
func (c *LagCollector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{c.lag, c.pending, c.seconds, c.errors} {
		ch <- d
	}
}

// Collect implements prom.Collector: one GroupStats per target.
func (c *LagCollector) Collect(ch chan<- prom.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, t := range c.targets {
		stats, err := c.adm.GroupStats(ctx, t.Topic, t.Group)
		failed := 0.0
		if err != nil {
			failed = 1
		}
		ch <- prom.MustNewConstMetric(c.errors, prom.GaugeValue, failed, t.Topic, t.Group)
		if err != nil {
			continue
		}
		for _, p := range stats.Partitions {
			labels := []string{t.Topic, t.Group, strconv.Itoa(p.Partition)}
			ch <- prom.MustNewConstMetric(c.lag, prom.GaugeValue, float64(p.Lag), labels...)
			ch <- prom.MustNewConstMetric(c.pending, prom.GaugeValue, float64(p.Pending), labels...)
			ch <- prom.MustNewConstMetric(c.seconds, prom.GaugeValue, p.TimeLag.Seconds(), labels...)
		}
	}
}
