package main

import (
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// memoryView is admin.TopicMemory in "info --json" and "stats --json": the memory of the
// Redis servers and whether the topic's publishes are refused.
type memoryView struct {
	HighWater float64            `json:"highWater"` // fraction of maxmemory; 0: none
	Servers   []serverMemoryView `json:"servers"`
	Full      bool               `json:"full"` // a server is at maxmemory, or publishes are refused
	// RefusedSince is when Redis began refusing publishes to the topic for memory and
	// LastRefused the latest refusal; null when none was refused lately.
	RefusedSince jsonTime `json:"refusedSince"`
	LastRefused  jsonTime `json:"lastRefused"`
}

// serverMemoryView is admin.ServerMemory.
type serverMemoryView struct {
	Addr      string  `json:"addr"`
	UsedBytes int64   `json:"usedBytes"`
	MaxBytes  int64   `json:"maxBytes"` // 0: no maxmemory
	Percent   float64 `json:"percent"`  // of maxmemory
	High      bool    `json:"high"`     // at or above the high-water mark
	Full      bool    `json:"full"`     // at maxmemory
	Error     string  `json:"error,omitempty"`
}

func newMemoryView(m admin.TopicMemory) memoryView {
	v := memoryView{HighWater: m.HighWater, Servers: []serverMemoryView{}, Full: m.Full(),
		RefusedSince: jsonTime(m.RefusedSince), LastRefused: jsonTime(m.LastRefused)}
	for _, s := range m.Servers {
		sv := serverMemoryView{Addr: s.Addr, UsedBytes: s.Used, MaxBytes: s.Max, Percent: s.Percent, High: s.High, Full: s.Full}
		if s.Err != nil {
			sv.Error = s.Err.Error()
		}
		v.Servers = append(v.Servers, sv)
	}
	return v
}

// memoryLine is one line of the memory a table or a text shows: a name and its value.
type memoryLine struct{ name, value string }

// memoryLines are the lines info and stats show of m: "memory" per server (named by its
// address when there are several), then "full" when it is.
func (a *app) memoryLines(m admin.TopicMemory) []memoryLine {
	var out []memoryLine
	for _, s := range m.Servers {
		name := "memory"
		if len(m.Servers) > 1 {
			name += " " + s.Addr
		}
		out = append(out, memoryLine{name, memoryText(s, m.HighWater)})
	}
	if m.Full() {
		out = append(out, memoryLine{"full", a.refusalText(m)})
	}
	return out
}

// memoryText is one server's memory: "38.2/40.0 MiB (95 %)", with the high-water mark when it
// is above it.
func memoryText(s admin.ServerMemory, mark float64) string {
	text := s.String()
	switch {
	case s.Full:
		return text + ", at maxmemory"
	case s.High && mark > 0:
		return text + fmt.Sprintf(", above the %.0f %% high-water mark", mark*100)
	}
	return text
}

// refusalText is since when the topic's publishes are refused, or that they will be.
func (a *app) refusalText(m admin.TopicMemory) string {
	since := m.RefusedSince
	if since.IsZero() {
		return "at maxmemory: publishes will be refused"
	}
	return fmt.Sprintf("publishing refused since %s (%s)", a.timeText(since), agoText(time.Since(since)))
}
