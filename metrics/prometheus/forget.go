package prometheus

import (
	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq"
)

var _ streamq.MetricsForgetter = (*Collector)(nil)

// Forget implements streamq.MetricsForgetter: it deletes every series of one member (topic,
// group and consumer of l) when its subscription closes, so members that restart with a
// generated name do not leave a growing set of series behind.
func (c *Collector) Forget(l streamq.Labels) {
	match := prom.Labels{"topic": l.Topic, "group": l.Group, "consumer": l.Consumer}
	for _, v := range []interface{ DeletePartialMatch(prom.Labels) int }{
		c.vecs.consumed, c.vecs.acked, c.vecs.retried, c.vecs.deadLettered, c.vecs.payloadMissing,
		c.vecs.trimmed, c.vecs.inFlight, c.vecs.eligiblePartitions, c.vecs.leasedPartitions,
		c.vecs.maxLeasedPartitions, c.vecs.pausedSince, c.vecs.outageSince, c.vecs.outageProbes,
		c.vecs.handle, c.vecs.backpressure,
	} {
		v.DeletePartialMatch(match)
	}
	same := func(k streamq.Labels) bool {
		return k.Topic == l.Topic && k.Group == l.Group && k.Consumer == l.Consumer
	}
	c.partitions.m.Range(func(k, _ any) bool {
		if same(k.(streamq.Labels)) {
			c.partitions.m.Delete(k)
		}
		return true
	})
	c.subscriptions.m.Range(func(k, _ any) bool {
		if same(k.(streamq.Labels)) {
			c.subscriptions.m.Delete(k)
		}
		return true
	})
	c.trimmed.m.Range(func(k, _ any) bool {
		if same(k.(trimKey).labels) {
			c.trimmed.m.Delete(k)
		}
		return true
	})
}
