package partition

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// RefreshRetry is how long a Cache goes on with a topic's known partition count after
// re-reading it failed, before it reads again.
const RefreshRetry = time.Second

// Cache remembers each topic's partition count and re-reads it after refresh has passed, so a
// topic grown by an operator is picked up by running publishers and subscribers.
type Cache struct {
	reg     *Registry
	defN    int
	refresh time.Duration
	now     func() time.Time

	// Settings are field, value pairs stored in the meta hash whenever this cache registers
	// a topic. Set before first use.
	Settings []string
	// OnRegister, when set, runs after this cache registered a topic (its first use, or again
	// after the topic's metadata vanished), before Partitions returns. Set before first use.
	OnRegister func(ctx context.Context, topic string, t Topic) error

	mu     sync.RWMutex
	topics map[string]*cached
}

type cached struct {
	mu       sync.Mutex // serialises loads
	n        atomic.Int64
	loadedAt atomic.Int64 // unix nanoseconds
}

// NewCache returns a Cache that registers unknown topics with defaultCount partitions (one
// when defaultCount is 0: nobody stated a count).
func NewCache(reg *Registry, defaultCount int, refresh time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{reg: reg, defN: defaultCount, refresh: refresh, now: now, topics: map[string]*cached{}}
}

func (c *Cache) entry(topic string) *cached {
	c.mu.RLock()
	e, ok := c.topics[topic]
	c.mu.RUnlock()
	if ok {
		return e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok = c.topics[topic]; !ok {
		e = &cached{}
		c.topics[topic] = e
	}
	return e
}

func (c *Cache) fresh(e *cached) (int, bool) {
	n := int(e.n.Load())
	return n, n > 0 && c.now().UnixNano()-e.loadedAt.Load() < int64(c.refresh)
}

// Partitions returns topic's partition count, registering the topic on first use. Only the
// first call per topic and one call per refresh period talk to Redis.
func (c *Cache) Partitions(ctx context.Context, topic string) (int, error) {
	e := c.entry(topic)
	if n, ok := c.fresh(e); ok {
		return n, nil // the hot path: no lock
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := c.fresh(e); ok {
		return n, nil
	}
	n, err := c.load(ctx, topic, int(e.n.Load()))
	if err != nil {
		if known := int(e.n.Load()); known > 0 {
			// The re-read failed (the master of the topic's slot is failing over, Redis is
			// restarting): go on with the count we know, and read again after a short delay
			// rather than on every call.
			e.loadedAt.Store(c.now().Add(min(c.refresh, RefreshRetry) - c.refresh).UnixNano())
			return known, nil
		}
		return 0, err
	}
	e.loadedAt.Store(c.now().UnixNano())
	e.n.Store(int64(n))
	return n, nil
}

func (c *Cache) load(ctx context.Context, topic string, known int) (int, error) {
	if known == 0 {
		return c.register(ctx, topic, c.defN)
	}
	n, exists, err := c.reg.Count(ctx, topic)
	if err != nil {
		return 0, err
	}
	if !exists {
		// The metadata vanished (admin DeleteTopic, a flushed Redis): register again, with
		// the stated count or else the count known until now.
		return c.register(ctx, topic, cmp.Or(c.defN, known))
	}
	return n, nil
}

func (c *Cache) register(ctx context.Context, topic string, count int) (int, error) {
	t, err := c.reg.RegisterTopic(ctx, topic, count, c.Settings)
	if err != nil {
		return 0, err
	}
	if c.OnRegister != nil {
		if err := c.OnRegister(ctx, topic, t); err != nil {
			return 0, err
		}
	}
	return t.Count, nil
}

// Forget drops a topic from the cache so the next call reloads it.
func (c *Cache) Forget(topic string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.topics, topic)
}
