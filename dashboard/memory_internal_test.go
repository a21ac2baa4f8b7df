package dashboard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/admin"
)

// TestMemoryHealth: a full Redis is critical (since when publishing is refused, or that it
// will be), memory above the high-water mark a warning, and room below it no problem.
func TestMemoryHealth(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	server := func(used, maxMem int64, high, full bool) admin.ServerMemory {
		return admin.ServerMemory{Addr: "r:6379", Used: used, Max: maxMem, Percent: float64(used) * 100 / float64(maxMem), High: high, Full: full}
	}
	const mib = 1 << 20
	tests := []struct {
		name  string
		m     admin.TopicMemory
		state string
		texts []string
	}{
		{"room", admin.TopicMemory{HighWater: 0.8, Servers: []admin.ServerMemory{server(10*mib, 40*mib, false, false)}}, sevOK, nil},
		{"above the mark", admin.TopicMemory{HighWater: 0.8, Servers: []admin.ServerMemory{server(36*mib, 40*mib, true, false)}}, sevWarning,
			[]string{"Redis r:6379 memory 36.0/40.0 MiB (90 %), above the 80 % high-water mark of maxmemory"}},
		{"full, nothing refused yet", admin.TopicMemory{HighWater: 0.8, Servers: []admin.ServerMemory{server(40*mib, 40*mib, true, true)}}, sevCritical,
			[]string{"Redis r:6379 at maxmemory, 40.0/40.0 MiB (100 %): publishes will be refused"}},
		{"publishing refused", admin.TopicMemory{HighWater: 0.8, Servers: []admin.ServerMemory{server(40*mib, 40*mib, true, true)},
			RefusedSince: now.Add(-3 * time.Minute), LastRefused: now}, sevCritical,
			[]string{"Redis full: publishing refused since 2026-12-01 19:57:00 UTC (3m ago); consumers drain it, the group furthest behind holds the memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := okHealth()
			memoryHealth(&v, tt.m, now)
			assert.Equal(t, tt.state, v.State)
			var texts []string
			for _, p := range v.Problems {
				texts = append(texts, p.Text)
			}
			assert.Equal(t, tt.texts, texts)
		})
	}
}
