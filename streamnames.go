package streamq

import (
	"sync"

	"github.com/streamq-dev/streamq/internal/keys"
)

// streamNames caches the partition stream keys of each topic, so that publishing builds no
// key strings per message. A topic's list grows when its partition count does.
type streamNames struct {
	space keys.Space
	m     sync.Map // topic -> []string
}

// get returns the stream key of partition p of topic, which has n partitions (p < n).
func (c *streamNames) get(topic string, p, n int) string {
	if v, ok := c.m.Load(topic); ok {
		if names := v.([]string); p < len(names) {
			return names[p]
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = c.space.PartitionStream(topic, i)
	}
	c.m.Store(topic, names)
	return names[p]
}
