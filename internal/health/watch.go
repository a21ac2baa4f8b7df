package health

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/server"
)

// memoryReadTimeout bounds one round of INFO memory.
const memoryReadTimeout = 5 * time.Second

var (
	errMemoryFull = errors.New("used_memory at maxmemory")
	errMemoryHigh = errors.New("used_memory above the high-water mark")
)

// memoryLevel is where a server's used memory stands against its maxmemory.
type memoryLevel int

const (
	memoryOK   memoryLevel = iota // below the high-water mark, or no limit
	memoryHigh                    // at or above the high-water mark
	memoryFull                    // at maxmemory: Redis refuses what adds memory
)

// levelOf places m against the high-water mark (a fraction of maxmemory; <= 0: none).
func levelOf(m server.Memory, mark float64) memoryLevel {
	switch {
	case m.Full():
		return memoryFull
	case mark > 0 && m.Above(mark):
		return memoryHigh
	}
	return memoryOK
}

// Reading is what a Watch last read of one Redis server's memory.
type Reading struct {
	// Addr is the server ("host:port"), one per master on a Cluster.
	Addr string
	// Used and Max are INFO memory's used_memory and maxmemory, in bytes (Max 0: no limit).
	Used, Max int64
	// High reports used memory at or above the high-water mark.
	High bool
	// FullSince is when the server was first seen at maxmemory; zero when it is not full.
	FullSince time.Time
}

// WatchConfig is how a Watch reads: a high-water fraction of maxmemory (above 0, at most 1;
// <= 0: no mark) and the interval between readings (positive).
type WatchConfig struct {
	HighWater float64
	Interval  time.Duration
}

// mark is the high-water fraction, 0 when there is none.
func (c WatchConfig) mark() float64 { return max(c.HighWater, 0) }

// Watch reads the memory of the Redis servers behind a client every interval and logs
// once when one passes the high-water mark of its maxmemory, once when it is full, and once
// when it falls back below the mark. pressure tells the housekeepers to trim what every group
// acked; a Publisher refused for memory reports it at once (refused). A server that refuses
// INFO memory is not asked again.
type Watch struct {
	rdb    redis.UniversalClient
	cfg    WatchConfig
	log    watermill.LoggerAdapter
	clock  clock.Clock
	run    *run.Runner
	report func(Reading) // nil: nobody is told of each reading

	mu      sync.Mutex
	servers map[string]Reading
	levels  map[string]memoryLevel
	refusal time.Time // a Publisher was refused for memory since the last read found room
	blind   bool      // INFO memory refused: nothing to watch
}

// NewWatch returns the watch of rdb's servers; report (nil: none) gets every reading.
func NewWatch(rdb redis.UniversalClient, cfg WatchConfig, log watermill.LoggerAdapter, c clock.Clock, report func(Reading)) *Watch {
	return &Watch{rdb: rdb, cfg: cfg, log: log, clock: c, report: report,
		run: run.NewRunner(), servers: map[string]Reading{}, levels: map[string]memoryLevel{}}
}

// Start starts reading, once: later calls do nothing.
func (w *Watch) Start() { w.run.Start(w.loop) }

// Stop stops reading and waits for a reading under way.
func (w *Watch) Stop() { w.run.Stop() }

func (w *Watch) loop() {
	for {
		if !w.check() {
			return // the servers do not tell their memory
		}
		if !w.run.Sleep(w.clock, w.cfg.Interval) {
			return
		}
	}
}

// check reads every server once and logs what changed; false when INFO memory is refused.
func (w *Watch) check() bool {
	ctx, cancel := context.WithTimeout(context.Background(), memoryReadTimeout)
	defer cancel()
	go func() {
		select {
		case <-w.run.Quit():
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, m := range server.ReadMemory(ctx, w.rdb) {
		if m.Err != nil && server.Refused(m.Err) {
			w.log.Debug("Redis memory is not watched: the server refused INFO memory", watermill.LogFields{"server": m.Addr, "reply": m.Err.Error()})
			w.mu.Lock()
			w.blind = true
			w.mu.Unlock()
			return false
		}
		if m.Err == nil {
			w.observe(m)
		}
	}
	return true
}

// observe records one reading, reports it to the metrics and logs a change of level.
func (w *Watch) observe(m server.Memory) {
	s, was, seen := w.record(m)
	if w.report != nil {
		w.report(s)
	}
	if level := levelOf(m, w.cfg.mark()); level != was && (seen || level != memoryOK) {
		w.logLevel(m, was, level)
	}
}

// record stores one reading; it returns it and the server's level before it (seen: there
// was one).
func (w *Watch) record(m server.Memory) (s Reading, was memoryLevel, seen bool) {
	level := levelOf(m, w.cfg.mark())
	w.mu.Lock()
	was, seen = w.levels[m.Addr]
	w.levels[m.Addr] = level
	prev := w.servers[m.Addr]
	s = Reading{Addr: m.Addr, Used: m.Used, Max: m.Max, High: level >= memoryHigh}
	if level == memoryFull {
		s.FullSince = prev.FullSince
		if s.FullSince.IsZero() {
			s.FullSince = w.clock.Now()
		}
	} else {
		w.refusal = time.Time{}
	}
	w.servers[m.Addr] = s
	w.mu.Unlock()
	return s, was, seen
}

func (w *Watch) logLevel(m server.Memory, was, level memoryLevel) {
	fields := watermill.LogFields{"server": m.Addr, "used_memory": m.Used, "maxmemory": m.Max,
		"percent": percentOf(m.Used, m.Max), "high_water_percent": int(w.cfg.mark() * 100)}
	switch level {
	case memoryFull:
		fields["what_happens"] = "Redis refuses publishes (Publish returns ErrRedisFull) while consumers drain; publishing resumes when the trims that follow their acks free memory"
		fields["next_step"] = "find the group that is behind: streamq lag; streamq groups (docs/storage.md, Redis full)"
		w.log.Error("Redis is full (used memory at maxmemory): publishing is refused", errMemoryFull, fields)
	case memoryHigh:
		if was == memoryFull {
			w.log.Info("Redis has room again, above the high-water mark", fields)
			return
		}
		fields["what_happens"] = "at maxmemory Redis refuses publishes until consumers drain; acked entries are trimmed from now on"
		w.log.Error("Redis used memory passed the high-water mark of maxmemory", errMemoryHigh, fields)
	default:
		w.log.Info("Redis used memory fell back below the high-water mark", fields)
	}
}

func percentOf(used, limit int64) int {
	if limit <= 0 {
		return 0
	}
	return int(used * 100 / limit)
}

// Refused records that Redis refused a publish for memory: the servers are under pressure
// before the next reading tells.
func (w *Watch) Refused() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refusal.IsZero() {
		w.refusal = w.clock.Now()
	}
}

// Pressure reports whether some server is at or above the high-water mark, or refused a
// publish since the last reading.
func (w *Watch) Pressure() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.refusal.IsZero() {
		return true
	}
	for _, l := range w.levels {
		if l >= memoryHigh {
			return true
		}
	}
	return false
}

// Status returns the last reading of each server, by address.
func (w *Watch) Status() []Reading {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Reading, 0, len(w.servers))
	for _, s := range w.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Reading) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}
