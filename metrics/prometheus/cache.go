package prometheus

import "sync"

// cache holds the series resolved for each key. The hot path is a sync.Map load; resolve
// runs on the first use of a key only (concurrent first uses may each run it: Prometheus
// returns the same child for the same label values, so either result is right).
type cache[K comparable, V any] struct {
	m       sync.Map // K -> V
	resolve func(K) V
}

func (c *cache[K, V]) get(k K) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v, _ := c.m.LoadOrStore(k, c.resolve(k))
	return v.(V)
}
