package dashboard

import (
	"context"
	"fmt"
	"strings"
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

// memoryUseEvery is how long one reading of who holds the memory (admin.MemoryUse, every
// topic) serves the requests that follow it.
const memoryUseEvery = 10 * time.Second

// useReader reads who holds the memory at most once per memoryUseEvery, and only while some
// server is at or above the high-water mark or publishes are refused.
type useReader struct {
	mu  sync.Mutex
	use *admin.MemoryUse
	at  time.Time
}

// pressed reports whether m calls for naming who holds the memory.
func pressed(m admin.TopicMemory) bool {
	for _, s := range m.Servers {
		if s.High || s.Full {
			return true
		}
	}
	return m.Refused()
}

func (u *useReader) read(ctx context.Context, adm *admin.Admin, m admin.TopicMemory) (*admin.MemoryUse, error) {
	if !pressed(m) {
		return nil, nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.use != nil && time.Since(u.at) < memoryUseEvery {
		return u.use, nil
	}
	use, err := adm.MemoryUse(ctx)
	if err != nil {
		return nil, err
	}
	u.use, u.at = &use, time.Now()
	return u.use, nil
}

// memoryHealth adds the problems of m to v: a full Redis (critical), a server above the
// high-water mark (warning). With use (who holds the memory), the topic whose group holds
// back the most keeps that severity and names the group; the other topics say, as a
// warning, because of which group Redis is full. now is the Redis server's time.
func memoryHealth(v *healthView, m admin.TopicMemory, use *admin.MemoryUse, now time.Time) {
	var mine healthView
	serverProblems(&mine, m, now)
	for _, p := range mine.Problems {
		q := v.add(p.Code, p.Severity, "%s", p.Text)
		q.Since, q.Next, q.Command = p.Since, p.Next, p.Command
		attribute(v, q, m.Topic, use)
	}
}

// serverProblems are the problems of m's servers, as no attribution tells them.
func serverProblems(v *healthView, m admin.TopicMemory, now time.Time) {
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

// attribute rewrites p, a memory problem of topic, with who holds the memory: on the topic of
// use.Cause it names the group and keeps its severity; elsewhere it says because of which
// group, as a warning. Nothing changes without use.
func attribute(v *healthView, p *problemView, topic string, use *admin.MemoryUse) {
	switch {
	case use == nil:
	case use.Cause == nil:
		p.Text = strings.Replace(p.Text, furthest, "", 1) + "; no group holds memory back (length retention and dead letters keep it)"
		p.then("free memory: trim the topics, drop dead letters, or raise maxmemory", cli("info", topic))
	case use.Cause.Topic == topic:
		c := use.Cause
		p.Text = strings.Replace(p.Text, furthest, "", 1) +
			fmt.Sprintf("; group %s holds back %s here, the most of any group", c.Group, holdText(*c))
		p.Group = c.Group
		p.then("let "+c.Group+" catch up: start or fix its members; reset its offset if it may skip them, delete it if nobody needs it", cli("stats", topic, c.Group))
	default:
		c := use.Cause
		state := "Redis is full"
		if p.Code == probMemoryHigh {
			state = "Redis memory is high"
		}
		p.Text = fmt.Sprintf("%s because of group %s on topic %s (it holds back %s); ", state, c.Group, c.Topic, holdText(*c)) +
			strings.Replace(p.Text, furthest, "", 1)
		p.Severity = sevWarning
		p.then("free memory on topic "+c.Topic+": let group "+c.Group+" catch up there", cli("stats", c.Topic, c.Group))
	}
	v.State = worstOf(v.Problems)
}

// furthest is what a full Redis's problem says of who holds the memory when nobody read it.
const furthest = "; consumers drain it, the group furthest behind holds the memory"

// holdText is what a group holds back: "400 unacked messages (~1.1 MiB), 2 retries (~1.2 KiB)".
func holdText(g admin.GroupMemory) string {
	out := fmt.Sprintf("%s (~%s)", plural(g.Unacked, "unacked message"), admin.SizeText(g.UnackedBytes))
	switch {
	case g.Retries == 1:
		out += fmt.Sprintf(", 1 retry (~%s)", admin.SizeText(g.RetryBytes))
	case g.Retries > 1:
		out += fmt.Sprintf(", %d retries (~%s)", g.Retries, admin.SizeText(g.RetryBytes))
	}
	return out
}

// worstOf is the worst severity of problems, ok when none.
func worstOf(problems []problemView) string {
	state := sevOK
	for _, p := range problems {
		if rank(p.Severity) > rank(state) {
			state = p.Severity
		}
	}
	return state
}

func percentText(f float64) string { return fmt.Sprintf("%.0f %%", f*100) }
