package admin

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/server"
)

// DefaultMemoryHighWater is the fraction of maxmemory at which ServerMemory.High is set: the
// Publishers' and Subscribers' default (streamq.DefaultMemoryHighWater).
const DefaultMemoryHighWater = 0.8

// RefusalTTL is how long a topic's "publishing refused" record outlives the last refusal a
// Publisher noted (TopicMemory.RefusedSince).
const RefusalTTL = partition.RefusalTTL

// ServerMemory is one Redis server's memory (every master of a Cluster), as INFO memory tells.
type ServerMemory struct {
	Addr string
	// Used and Max are used_memory and maxmemory, in bytes; Max 0: no maxmemory.
	Used, Max int64
	// Percent is Used of Max (0 when Max is 0).
	Percent float64
	// High reports used memory at or above the high-water mark (Options.MemoryHighWater);
	// Full reports it at maxmemory: Redis refuses publishes.
	High, Full bool
	// Err is why the server told nothing (INFO memory refused, or the server unreachable);
	// the fields above are then zero.
	Err error
}

// String is the server's memory for a person: "38.2/40.0 MiB (95 %)", "2.4 MiB (no
// maxmemory)", or "unknown (" and the error ")".
func (s ServerMemory) String() string {
	switch {
	case s.Err != nil:
		return "unknown (" + s.Err.Error() + ")"
	case s.Max <= 0:
		return sizeText(s.Used, s.Used) + " (no maxmemory)"
	}
	scale := max(s.Used, s.Max) // the unit of the larger
	return fmt.Sprintf("%s/%s (%.0f %%)", sizeNumber(s.Used, scale), sizeText(s.Max, scale), s.Percent)
}

// sizeUnit is the unit a size of scale bytes is shown in, and its size.
func sizeUnit(scale int64) (string, float64) {
	switch {
	case scale >= 1<<30:
		return "GiB", 1 << 30
	case scale >= 1<<20:
		return "MiB", 1 << 20
	case scale >= 1<<10:
		return "KiB", 1 << 10
	}
	return "B", 1
}

// sizeNumber is n in the unit of scale, without the unit: "38.2".
func sizeNumber(n, scale int64) string {
	unit, size := sizeUnit(scale)
	if unit == "B" {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatFloat(float64(n)/size, 'f', 1, 64)
}

// sizeText is n in the unit of scale: "40.0 MiB".
func sizeText(n, scale int64) string {
	unit, _ := sizeUnit(scale)
	return sizeNumber(n, scale) + " " + unit
}

// TopicMemory is the memory of the Redis servers behind a topic and whether its publishes are
// being refused.
type TopicMemory struct {
	Topic string
	// HighWater is the fraction of maxmemory ServerMemory.High is judged against; 0: none.
	HighWater float64
	Servers   []ServerMemory
	// RefusedSince is when Redis first refused a publish to the topic for memory, of the
	// refusals going on: a refused Publisher notes it (at most once a second), and the record
	// is gone RefusalTTL after the last refusal, LastRefused. Both zero when no publish was
	// refused within RefusalTTL. Times are the Redis server's clock.
	RefusedSince, LastRefused time.Time
}

// Refused reports whether publishes to the topic are being refused for memory.
func (m TopicMemory) Refused() bool { return !m.RefusedSince.IsZero() }

// Full reports whether some server is at maxmemory, or publishes are refused.
func (m TopicMemory) Full() bool {
	for _, s := range m.Servers {
		if s.Full {
			return true
		}
	}
	return m.Refused()
}

// MemoryHighWater is the fraction of maxmemory ServerMemory.High is judged against
// (Options.MemoryHighWater); 0: none.
func (a *Admin) MemoryHighWater() float64 { return a.highWater }

// ServerMemory reads INFO memory of every server (every master of a Cluster), sorted by
// address. A server that tells nothing has its Err set; the call fails only when ctx does.
func (a *Admin) ServerMemory(ctx context.Context) ([]ServerMemory, error) {
	reads := server.ReadMemory(ctx, a.rdb)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read Redis memory: %w", err)
	}
	out := make([]ServerMemory, 0, len(reads))
	for _, m := range reads {
		out = append(out, a.serverMemory(m))
	}
	return out, nil
}

func (a *Admin) serverMemory(m server.Memory) ServerMemory {
	if !m.Known() {
		return ServerMemory{Addr: m.Addr, Err: m.Err}
	}
	s := ServerMemory{Addr: m.Addr, Used: m.Used, Max: m.Max, Full: m.Full()}
	if m.Max > 0 {
		s.Percent = float64(m.Used) * 100 / float64(m.Max)
	}
	s.High = s.Full || (a.highWater > 0 && m.Above(a.highWater))
	return s
}

// PublishRefusal reads a topic's refusal record: since when (and when last) Redis refused a
// publish to it for memory; zero times when no publish was refused within RefusalTTL. It
// does not check that the topic exists.
func (a *Admin) PublishRefusal(ctx context.Context, topic string) (since, last time.Time, err error) {
	r, err := a.reg.Refusal(ctx, topic)
	return r.Since, r.Last, err
}

// TopicMemory reads the memory of every server (ServerMemory) and topic's refusal record
// (PublishRefusal). ErrTopicNotFound for a topic that is not registered.
func (a *Admin) TopicMemory(ctx context.Context, topic string) (TopicMemory, error) {
	if _, err := a.topicMeta(ctx, topic); err != nil {
		return TopicMemory{}, err
	}
	servers, err := a.ServerMemory(ctx)
	if err != nil {
		return TopicMemory{}, err
	}
	m := TopicMemory{Topic: topic, HighWater: a.highWater, Servers: servers}
	m.RefusedSince, m.LastRefused, err = a.PublishRefusal(ctx, topic)
	return m, err
}
