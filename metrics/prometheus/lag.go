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
//	| metric                               | type    | labels                  |
//	|--------------------------------------|---------|-------------------------|
//	| streamq_lag                          | gauge   | topic, group, partition |
//	| streamq_lag_seconds                  | gauge   | topic, group, partition |
//	| streamq_pending                      | gauge   | topic, group, partition |
//	| streamq_pending_age_seconds          | gauge   | topic, group, partition |
//	| streamq_lag_skipped                  | gauge   | topic, group, partition |
//	| streamq_lag_scrape_errors            | gauge   | topic, group            |
//	| streamq_topic_length                 | gauge   | topic                   |
//	| streamq_topic_retries                | gauge   | topic                   |
//	| streamq_topic_published_total        | counter | topic                   |
//	| streamq_topic_retries_appended_total | counter | topic                   |
//
// They are admin.TopicLag's figures, read once per topic and scrape: streamq_lag is the
// entries the group still has to deliver (other groups' retries, which it skips, are
// streamq_lag_skipped), streamq_lag_seconds the age of the oldest of them on the Redis
// server's clock, streamq_pending_age_seconds that of the oldest pending entry;
// streamq_topic_length is the published messages the topic holds and streamq_topic_retries
// its retry entries; rate() of streamq_topic_published_total is the publish rate.
type LagCollector struct {
	adm     *admin.Admin
	targets []LagTarget
	timeout time.Duration
	d       lagDescs
}

// lagDescs are the LagCollector's series.
type lagDescs struct {
	lag, seconds, pending, pendingAge, skipped, errors *prom.Desc
	length, retries, published, retried                *prom.Desc
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
	return &LagCollector{adm: adm, targets: targets, timeout: timeout, d: newLagDescs(namespace)}
}

func newLagDescs(ns string) lagDescs {
	part, topic := []string{"topic", "group", "partition"}, []string{"topic"}
	return lagDescs{
		lag:        prom.NewDesc(ns+"_lag", "Entries of the partition the group still has to deliver (other groups' retries not counted).", part, nil),
		seconds:    prom.NewDesc(ns+"_lag_seconds", "Age of the oldest entry the group has still to deliver, on the Redis server's clock.", part, nil),
		pending:    prom.NewDesc(ns+"_pending", "Entries delivered to the group and not acked.", part, nil),
		pendingAge: prom.NewDesc(ns+"_pending_age_seconds", "Age of the oldest entry delivered to the group and not acked.", part, nil),
		skipped:    prom.NewDesc(ns+"_lag_skipped", "Other groups' retry entries after the group's position, which it skips.", part, nil),
		errors:     prom.NewDesc(ns+"_lag_scrape_errors", "1 when the last scrape of this group failed.", []string{"topic", "group"}, nil),
		length:     prom.NewDesc(ns+"_topic_length", "Published messages the topic's partitions hold.", topic, nil),
		retries:    prom.NewDesc(ns+"_topic_retries", "Retry entries the topic's partitions hold.", topic, nil),
		published:  prom.NewDesc(ns+"_topic_published_total", "Messages ever published to the topic (entries added less retries).", topic, nil),
		retried:    prom.NewDesc(ns+"_topic_retries_appended_total", "Retry entries ever appended to the topic.", topic, nil),
	}
}

// Describe implements prom.Collector.
func (c *LagCollector) Describe(ch chan<- *prom.Desc) {
	d := c.d
	for _, desc := range []*prom.Desc{d.lag, d.seconds, d.pending, d.pendingAge, d.skipped, d.errors, d.length, d.retries, d.published, d.retried} {
		ch <- desc
	}
}

// Collect implements prom.Collector: one admin.TopicLag per topic of the targets.
func (c *LagCollector) Collect(ch chan<- prom.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	read := map[string]*admin.TopicLag{}
	for _, t := range c.targets {
		tl, ok := read[t.Topic]
		if !ok {
			tl = c.readTopic(ctx, ch, t.Topic)
			read[t.Topic] = tl
		}
		g := groupOf(tl, t.Group)
		failed := 0.0
		if g == nil {
			failed = 1
		}
		ch <- prom.MustNewConstMetric(c.d.errors, prom.GaugeValue, failed, t.Topic, t.Group)
		if g != nil {
			c.collectGroup(ch, *g)
		}
	}
}

// readTopic reads a topic's lag and exports its topic series; nil when it cannot be read.
func (c *LagCollector) readTopic(ctx context.Context, ch chan<- prom.Metric, topic string) *admin.TopicLag {
	tl, err := c.adm.TopicLag(ctx, topic)
	if err != nil {
		return nil
	}
	ch <- prom.MustNewConstMetric(c.d.length, prom.GaugeValue, float64(tl.Length), topic)
	ch <- prom.MustNewConstMetric(c.d.retries, prom.GaugeValue, float64(tl.Retries), topic)
	ch <- prom.MustNewConstMetric(c.d.published, prom.CounterValue, float64(tl.Published), topic)
	ch <- prom.MustNewConstMetric(c.d.retried, prom.CounterValue, float64(tl.RetriesAdded), topic)
	return &tl
}

func groupOf(tl *admin.TopicLag, group string) *admin.GroupLag {
	if tl == nil {
		return nil
	}
	for i := range tl.Groups {
		if tl.Groups[i].Group == group {
			return &tl.Groups[i]
		}
	}
	return nil
}

func (c *LagCollector) collectGroup(ch chan<- prom.Metric, g admin.GroupLag) {
	for _, p := range g.Partitions {
		labels := []string{g.Topic, g.Group, strconv.Itoa(p.Partition)}
		ch <- prom.MustNewConstMetric(c.d.lag, prom.GaugeValue, float64(p.Lag), labels...)
		ch <- prom.MustNewConstMetric(c.d.seconds, prom.GaugeValue, p.TimeLag.Seconds(), labels...)
		ch <- prom.MustNewConstMetric(c.d.pending, prom.GaugeValue, float64(p.Pending), labels...)
		ch <- prom.MustNewConstMetric(c.d.pendingAge, prom.GaugeValue, p.PendingAge.Seconds(), labels...)
		ch <- prom.MustNewConstMetric(c.d.skipped, prom.GaugeValue, float64(p.Skipped), labels...)
	}
}
