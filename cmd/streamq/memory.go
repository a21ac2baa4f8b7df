package main

import (
	"fmt"
	"strconv"
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
func (a *app) memoryLines(m memoryView) []memoryLine {
	var out []memoryLine
	for _, s := range m.Servers {
		name := "memory"
		if len(m.Servers) > 1 {
			name += " " + s.Addr
		}
		out = append(out, memoryLine{name, memoryText(s, m.HighWater)})
	}
	if m.Full {
		out = append(out, memoryLine{"full", a.refusalText(m)})
	}
	return out
}

// memoryText is one server's memory: "38.2/40.0 MiB (95 %)", with the high-water mark when it
// is above it.
func memoryText(s serverMemoryView, mark float64) string {
	switch {
	case s.Error != "":
		return "unknown (" + s.Error + ")"
	case s.MaxBytes <= 0:
		return bytesText(s.UsedBytes, s.UsedBytes) + " (no maxmemory)"
	}
	text := fmt.Sprintf("%s/%s (%.0f %%)", bytesNumber(s.UsedBytes, s.MaxBytes), bytesText(s.MaxBytes, s.MaxBytes), s.Percent)
	switch {
	case s.Full:
		return text + ", at maxmemory"
	case s.High && mark > 0:
		return text + fmt.Sprintf(", above the %.0f %% high-water mark", mark*100)
	}
	return text
}

// refusalText is since when the topic's publishes are refused, or that they will be.
func (a *app) refusalText(m memoryView) string {
	since := time.Time(m.RefusedSince)
	if since.IsZero() {
		return "at maxmemory: publishes will be refused"
	}
	return fmt.Sprintf("publishing refused since %s (%s)", a.timeText(since), agoText(time.Since(since)))
}

// bytesUnit is the unit a size of scale bytes is shown in, and its size.
func bytesUnit(scale int64) (string, float64) {
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

// bytesNumber is n in the unit of scale, without the unit: "38.2".
func bytesNumber(n, scale int64) string {
	unit, size := bytesUnit(scale)
	if unit == "B" {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatFloat(float64(n)/size, 'f', 1, 64)
}

// bytesText is n in the unit of scale: "40.0 MiB".
func bytesText(n, scale int64) string {
	unit, _ := bytesUnit(scale)
	return bytesNumber(n, scale) + " " + unit
}
