package streamq

import (
	"errors"
	"fmt"
	"time"
)

const (
	defaultMemoryHighWater     = 0.8
	defaultMemoryCheckInterval = 5 * time.Second
)

// MemoryWatch is how a Publisher or Subscriber watches the memory of its Redis servers (every
// master on a Cluster): what happens when Redis fills up is in docs/storage.md.
type MemoryWatch struct {
	// HighWater is the fraction of maxmemory (above 0, at most 1) at which used memory is
	// logged once, as it is again when it falls back, and at which the Subscribers' retention
	// trims every entry every group acked (below MaxLen, so that a drained backlog frees its
	// memory). Optional; default 0.8; -1: no mark (only a full Redis
	// is logged, and trimmed).
	HighWater float64
	// Interval is how often INFO memory is read. Optional; default 5s; -1: memory is not watched (nothing is logged, and a
	// Subscriber's retention never trims below MaxLen, so a Redis that filled up stays full
	// after its consumers drained it, until MaxLen is reached).
	Interval time.Duration
}

func (m *MemoryWatch) setDefaults() {
	if m.HighWater == 0 {
		m.HighWater = defaultMemoryHighWater
	}
	if m.Interval == 0 {
		m.Interval = defaultMemoryCheckInterval
	}
}

// validate reports the group's invalid fields, each with its path under Memory.
func (m MemoryWatch) validate() error {
	var errs []error
	if h := m.HighWater; h != -1 && (h <= 0 || h > 1) {
		errs = append(errs, fmt.Errorf("Memory.HighWater must be above 0 and at most 1, 0 (default) or -1 (off), got %v", h))
	}
	if i := m.Interval; i != -1 && i <= 0 {
		errs = append(errs, fmt.Errorf("Memory.Interval must be positive, 0 (default) or -1 (off), got %s", i))
	}
	return errors.Join(errs...)
}

// watched reports whether memory is read at all.
func (m MemoryWatch) watched() bool { return m.Interval > 0 }

// mark is the high-water fraction, 0 when there is none.
func (m MemoryWatch) mark() float64 { return max(m.HighWater, 0) }

// ServerMemory is what a Publisher or Subscriber last read of one Redis server's memory.
type ServerMemory struct {
	// Addr is the server ("host:port"), one per master on a Cluster.
	Addr string
	// Used and Max are INFO memory's used_memory and maxmemory, in bytes (Max 0: no limit).
	Used, Max int64
	// High reports used memory at or above the high-water mark (MemoryWatch.HighWater).
	High bool
	// FullSince is when the server was first seen at maxmemory, refusing publishes; zero when
	// it is not full.
	FullSince time.Time
}
