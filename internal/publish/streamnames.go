package publish

import (
	"sync"
	"sync/atomic"

	"github.com/streamq-dev/streamq/internal/keys"
)

// streamNames caches the partition stream keys of each topic, so that publishing builds no
// key strings per message, with a count of what this engine appended to each (which
// triggers its length retention). A topic's list grows when its partition count does.
type streamNames struct {
	space keys.Space
	m     sync.Map // topic -> []*partitionSlot
}

// partitionSlot is one partition as the engine sees it.
type partitionSlot struct {
	stream           string
	index, producers string       // its payload index and the prefix of its producer keys
	idem             string       // the prefix of its idempotency buckets (Idempotency.ByUUID)
	appended         atomic.Int64 // entries this engine appended (parked ones are not counted)
}

// get returns partition p of topic, which has n partitions (p < n).
func (c *streamNames) get(topic string, p, n int) *partitionSlot {
	if v, ok := c.m.Load(topic); ok {
		if slots := v.([]*partitionSlot); p < len(slots) {
			return slots[p]
		}
	}
	old, _ := c.m.Load(topic)
	prev, _ := old.([]*partitionSlot)
	slots := make([]*partitionSlot, max(n, len(prev)))
	copy(slots, prev)
	for i := len(prev); i < len(slots); i++ {
		slots[i] = &partitionSlot{stream: c.space.PartitionStream(topic, i), index: c.space.PayloadIndex(topic, i),
			producers: c.space.Producers(topic, i), idem: c.space.Idempotency(topic, i)}
	}
	c.m.Store(topic, slots)
	return slots[p]
}
