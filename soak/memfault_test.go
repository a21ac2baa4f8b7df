//go:build soak

package soak

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/server"
)

// Memory pressure: for memoryFor, maxmemory is set memoryMargin above the server's
// used_memory with maxmemory-policy noeviction, so Redis soon refuses what adds memory
// (publishes) while consumers go on draining; then the previous maxmemory and policy come
// back.
const (
	memoryFor    = 5 * time.Second
	memoryMargin = 256 << 10
)

// memorySettings are the server settings the memory fault changes.
type memorySettings struct {
	max, policy string
}

func injectMemory(ctx context.Context, r *run) fault {
	f := fault{kind: kindMemory, start: time.Now()}
	c := r.fleet.direct
	prev, err := readMemorySettings(ctx, c)
	if err != nil {
		f.err, f.end = err, time.Now()
		return f
	}
	if f.err = squeeze(ctx, c); f.err == nil {
		pause(ctx, memoryFor)
	}
	f.err = joinErr(f.err, restoreMemory(context.WithoutCancel(ctx), c, prev))
	f.end = time.Now()
	return f
}

func readMemorySettings(ctx context.Context, c *redis.Client) (memorySettings, error) {
	got, err := c.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		return memorySettings{}, fmt.Errorf("memory fault: CONFIG GET: %w", err)
	}
	return memorySettings{max: got["maxmemory"], policy: got["maxmemory-policy"]}, nil
}

// squeeze sets noeviction and maxmemory just above what the server uses now.
func squeeze(ctx context.Context, c *redis.Client) error {
	m := server.MemoryOfKey(ctx, c, "")
	if !m.Known() {
		return fmt.Errorf("memory fault: INFO memory: %w", m.Err)
	}
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		return fmt.Errorf("memory fault: set noeviction: %w", err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(m.Used+memoryMargin, 10)).Err(); err != nil {
		return fmt.Errorf("memory fault: set maxmemory: %w", err)
	}
	return nil
}

// restoreMemory puts the settings of before the fault back.
func restoreMemory(ctx context.Context, c *redis.Client, prev memorySettings) error {
	return errors.Join(c.ConfigSet(ctx, "maxmemory", prev.max).Err(), c.ConfigSet(ctx, "maxmemory-policy", prev.policy).Err())
}

// refusedFull reports whether a Publish failed because Redis was at maxmemory, and whether
// the error was a bare OOM reply rather than streamq.ErrRedisFull.
func refusedFull(err error) (full, bare bool) {
	if errors.Is(err, streamq.ErrRedisFull) {
		return true, false
	}
	oom := redis.HasErrorPrefix(err, "OOM")
	return oom, oom
}

// memorySlack is how long after a memory fault ended a refusal may still be reported: a
// Publish refused just before the restore returns just after it.
const memorySlack = time.Second

// memoryEffect is what one memory fault did to the publishers.
type memoryEffect struct {
	fault                 fault
	refused               int // publish attempts refused (Redis full)
	messages              int // distinct messages among them
	firstRefused, resumed time.Time
	lastRefused           time.Time
	accepted              int // messages published while the fault lasted (memory freed by then)
	publishedAfterRefusal int // of those messages, published later (a retry succeeded)
	neverPublished        int // of those messages, never published (the publisher stopped first)
}

// refusedFor is how long publishing was refused: from the first refusal to the last one.
func (m memoryEffect) refusedFor() time.Duration { return m.lastRefused.Sub(m.firstRefused) }

// checkMemory measures every memory fault: the publishes refused in its window, from when to
// when, and whether the messages refused were published later. A refusal outside every
// memory fault fails, as does a memory fault that refused nothing (it did not bite) and an
// OOM refusal that did not come as streamq.ErrRedisFull.
func checkMemory(d *dataset, v *verdict, faults []fault) []memoryEffect {
	var out []memoryEffect
	for _, f := range faults {
		if f.kind == kindMemory && f.err == nil {
			out = append(out, memoryEffect{fault: f})
		}
	}
	seen := make([]map[string]bool, len(out))
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for _, e := range d.events {
		if e.Ev == evPublished {
			if i := memoryWindow(out, e.time()); i >= 0 && !e.time().After(out[i].fault.end) {
				out[i].accepted++
			}
		}
		if e.Ev != evPubFailed || !e.Full {
			continue
		}
		if e.BareOOM {
			v.fail("OOM not reported as streamq.ErrRedisFull", "%s %s at %s: %s", e.Proc, e.UUID, e.time().Format("15:04:05.000"), e.Err)
		}
		i := memoryWindow(out, e.time())
		if i < 0 {
			v.fail("publish refused outside a memory fault", "%s %s key %s seq %d at %s: %s", e.Proc, e.UUID, e.Key, e.Seq, e.time().Format("15:04:05.000"), e.Err)
			continue
		}
		out[i].count(e, seen[i])
	}
	for i := range out {
		out[i].settle(d, seen[i])
		if out[i].refused == 0 {
			v.fail("memory fault refused no publish", "at %s: maxmemory %d bytes above used memory for %s", out[i].fault.start.Format("15:04:05.000"), memoryMargin, memoryFor)
		}
	}
	return out
}

func memoryWindow(effects []memoryEffect, t time.Time) int {
	for i, m := range effects {
		if !t.Before(m.fault.start) && !t.After(m.fault.end.Add(memorySlack)) {
			return i
		}
	}
	return -1
}

func (m *memoryEffect) count(e event, seen map[string]bool) {
	m.refused++
	if m.firstRefused.IsZero() {
		m.firstRefused = e.time()
	}
	m.lastRefused = e.time()
	if !seen[e.UUID] {
		seen[e.UUID] = true
		m.messages++
	}
}

// settle counts which refused messages were published in the end, and finds when publishing
// resumed: the first successful publish of a refused message.
func (m *memoryEffect) settle(d *dataset, seen map[string]bool) {
	for uuid := range seen {
		pub, ok := d.published[uuid]
		if !ok {
			m.neverPublished++
			continue
		}
		m.publishedAfterRefusal++
		if m.resumed.IsZero() || pub.time().Before(m.resumed) {
			m.resumed = pub.time()
		}
	}
}
