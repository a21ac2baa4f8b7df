package dashboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// Problems of Redis's memory, on the topic's health.
const (
	probRedisFull  = "redis-full"  // Redis is at maxmemory: publishes are refused
	probMemoryHigh = "memory-high" // used memory is above the high-water mark of maxmemory
)

// memoryReadEvery is how long one reading of the servers' memory serves the requests that
// follow it: the Topics page of many topics sends INFO memory once, not once per topic.
const memoryReadEvery = 2 * time.Second

// memoryView is the memory of the Redis servers and whether the topic's publishes are
// refused (admin.TopicMemory).
type memoryView struct {
	HighWater float64            `json:"highWater"` // fraction of maxmemory; 0: none
	Servers   []serverMemoryView `json:"servers"`
	Full      bool               `json:"full"` // a server is at maxmemory, or publishes are refused
	// RefusedSince is when Redis began refusing publishes to the topic for memory, LastRefused
	// the latest refusal; null when none was refused lately.
	RefusedSince jsonTime `json:"refusedSince"`
	LastRefused  jsonTime `json:"lastRefused"`
}

// serverMemoryView is admin.ServerMemory.
type serverMemoryView struct {
	Addr      string  `json:"addr"`
	UsedBytes int64   `json:"usedBytes"`
	MaxBytes  int64   `json:"maxBytes"` // 0: no maxmemory
	Percent   float64 `json:"percent"`
	High      bool    `json:"high"` // at or above the high-water mark
	Full      bool    `json:"full"` // at maxmemory
	Text      string  `json:"text"` // "38.2/40.0 MiB (95 %)"
	Error     string  `json:"error"`
}

func memoryOf(m admin.TopicMemory) memoryView {
	v := memoryView{HighWater: m.HighWater, Servers: []serverMemoryView{}, Full: m.Full(),
		RefusedSince: jsonTime(m.RefusedSince), LastRefused: jsonTime(m.LastRefused)}
	for _, s := range m.Servers {
		sv := serverMemoryView{Addr: s.Addr, UsedBytes: s.Used, MaxBytes: s.Max, Percent: s.Percent,
			High: s.High, Full: s.Full, Text: s.String()}
		if s.Err != nil {
			sv.Error = s.Err.Error()
		}
		v.Servers = append(v.Servers, sv)
	}
	return v
}

// memoryReader reads the servers' memory at most once per memoryReadEvery.
type memoryReader struct {
	mu      sync.Mutex
	servers []admin.ServerMemory
	at      time.Time
}

func (m *memoryReader) read(ctx context.Context, adm *admin.Admin) ([]admin.ServerMemory, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.servers != nil && time.Since(m.at) < memoryReadEvery {
		return m.servers, nil
	}
	servers, err := adm.ServerMemory(ctx)
	if err != nil {
		return nil, err
	}
	m.servers, m.at = servers, time.Now()
	return servers, nil
}

// topicMemory reads the servers' memory (shared for memoryReadEvery) and topic's refusal
// record.
func (h *Handler) topicMemory(ctx context.Context, topic string) (admin.TopicMemory, error) {
	servers, err := h.memory.read(ctx, h.adm)
	if err != nil {
		return admin.TopicMemory{}, err
	}
	m := admin.TopicMemory{Topic: topic, HighWater: h.adm.MemoryHighWater(), Servers: servers}
	m.RefusedSince, m.LastRefused, err = h.adm.PublishRefusal(ctx, topic)
	return m, err
}

// memoryHealth adds the problems of m to v: a full Redis (critical), a server above the
// high-water mark (warning). now is the Redis server's time.
func memoryHealth(v *healthView, m admin.TopicMemory, now time.Time) {
	const drain = "free memory: let the group furthest behind catch up (or reset its offset), trim, or raise maxmemory"
	if !m.RefusedSince.IsZero() {
		p := v.add(probRedisFull, sevCritical, "Redis full: publishing refused since %s; consumers drain it, the group furthest behind holds the memory", at(m.RefusedSince, now))
		p.Since = jsonTime(m.RefusedSince)
		p.then(drain, cli("info", m.Topic))
	}
	for _, s := range m.Servers {
		switch {
		case s.Full && m.RefusedSince.IsZero():
			v.add(probRedisFull, sevCritical, "Redis %s at maxmemory, %s: publishes will be refused", s.Addr, s).
				then(drain, cli("info", m.Topic))
		case s.High && !s.Full:
			v.add(probMemoryHigh, sevWarning, "Redis %s memory %s, above the %s high-water mark of maxmemory", s.Addr, s, percentText(m.HighWater)).
				then("free memory before Redis refuses publishes: the group furthest behind holds it", cli("info", m.Topic))
		}
	}
}

func percentText(f float64) string { return fmt.Sprintf("%.0f %%", f*100) }
