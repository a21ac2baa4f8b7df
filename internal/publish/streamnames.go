package publish

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/streamq-dev/streamq/internal/keys"
)

// streamNames caches the partition stream keys of each topic, so that publishing builds no
// key strings per message, with a count of what this engine appended to each (which
// triggers its length retention). A topic's list grows when its partition count does.
type streamNames struct {
	space keys.Space
	group int      // partitions per producer record: recordGroup, 1 on a Cluster
	m     sync.Map // topic -> []*partitionSlot
}

// partitionSlot is one partition as the engine sees it.
type partitionSlot struct {
	stream        string
	index         string       // its payload index
	records, name string       // the prefix of its producer records (its group's), its name in them
	idem          string       // the prefix of its idempotency buckets (Idempotency.ByUUID)
	appended      atomic.Int64 // entries this engine appended (parked ones are not counted)
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
			records: c.space.Producers(topic, i-i%max(c.group, 1)), name: strconv.Itoa(i), idem: c.space.Idempotency(topic, i)}
	}
	c.m.Store(topic, slots)
	return slots[p]
}
