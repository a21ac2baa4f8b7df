package partition

import (
	"context"
	"sync"
	"time"
)

// Cache remembers each topic's partition count and re-reads it after refresh has passed, so a
// topic grown by an operator is picked up by running publishers and subscribers.
type Cache struct {
	reg     *Registry
	defN    int
	refresh time.Duration
	now     func() time.Time

	mu     sync.Mutex
	topics map[string]*cached
}

type cached struct {
	mu       sync.Mutex
	n        int
	loadedAt time.Time
}

// NewCache returns a Cache that registers unknown topics with defaultCount partitions.
func NewCache(reg *Registry, defaultCount int, refresh time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{reg: reg, defN: defaultCount, refresh: refresh, now: now, topics: map[string]*cached{}}
}

func (c *Cache) entry(topic string) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.topics[topic]
	if !ok {
		e = &cached{}
		c.topics[topic] = e
	}
	return e
}

// Partitions returns topic's partition count, registering the topic on first use. Only the
// first call per topic and one call per refresh period talk to Redis.
func (c *Cache) Partitions(ctx context.Context, topic string) (int, error) {
	e := c.entry(topic)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n > 0 && c.now().Sub(e.loadedAt) < c.refresh {
		return e.n, nil
	}
	n, err := c.load(ctx, topic, e.n == 0)
	if err != nil {
		return 0, err
	}
	e.n, e.loadedAt = n, c.now()
	return n, nil
}

func (c *Cache) load(ctx context.Context, topic string, first bool) (int, error) {
	if first {
		return c.reg.Register(ctx, topic, c.defN)
	}
	n, exists, err := c.reg.Count(ctx, topic)
	if err != nil {
		return 0, err
	}
	if !exists {
		// Deleted under us (admin DeleteTopic): register again.
		return c.reg.Register(ctx, topic, c.defN)
	}
	return n, nil
}

// Forget drops a topic from the cache so the next call reloads it.
func (c *Cache) Forget(topic string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.topics, topic)
}
