package prometheus

import (
	"strconv"

	"github.com/streamq-dev/streamq"
)

var _ streamq.GroupExpiryReporter = (*Collector)(nil)

// GroupExpired implements streamq.GroupExpiryReporter. Expiries are rare: the series is
// looked up on each call.
func (c *Collector) GroupExpired(l streamq.Labels) {
	c.vecs.groupExpired.WithLabelValues(l.Topic, strconv.Itoa(l.Partition), l.Group).Inc()
}
