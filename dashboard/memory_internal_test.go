package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			memoryHealth(&v, tt.m, nil, now)
			assert.Equal(t, tt.state, v.State)
			var texts []string
			for _, p := range v.Problems {
				texts = append(texts, p.Text)
			}
			assert.Equal(t, tt.texts, texts)
		})
	}
}

// TestMemoryHealthNamesTheCause: on the topic whose group holds back the most, the full
// Redis stays critical and names the group and what it holds back, with its next step; on
// another topic it is a warning saying because of which group; with no group holding
// anything back, it says so.
func TestMemoryHealthNamesTheCause(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	full := func(topic string) admin.TopicMemory {
		return admin.TopicMemory{Topic: topic, HighWater: 0.8, RefusedSince: now.Add(-time.Minute), LastRefused: now,
			Servers: []admin.ServerMemory{{Addr: "r:6379", Used: 40 << 20, Max: 40 << 20, Percent: 100, High: true, Full: true}}}
	}
	cause := admin.GroupMemory{Topic: "orders", Group: "audit", Unacked: 180000, UnackedBytes: 24 << 20, Retries: 2, RetryBytes: 2048}
	use := &admin.MemoryUse{Cause: &cause}

	v := okHealth()
	memoryHealth(&v, full("orders"), use, now)
	require.Len(t, v.Problems, 1)
	p := v.Problems[0]
	assert.Equal(t, sevCritical, v.State)
	assert.Equal(t, "Redis full: publishing refused since 2026-12-01 19:59:00 UTC (1m ago); group audit holds back 180000 unacked messages (~24.0 MiB), 2 retries (~2.0 KiB) here, the most of any group", p.Text)
	assert.Equal(t, "audit", p.Group)
	assert.Equal(t, "streamq stats orders audit", p.Command)

	v = okHealth()
	memoryHealth(&v, full("events"), use, now)
	require.Len(t, v.Problems, 1)
	p = v.Problems[0]
	assert.Equal(t, sevWarning, v.State, "the critical line stands on the topic that holds the memory")
	assert.True(t, strings.HasPrefix(p.Text, "Redis is full because of group audit on topic orders (it holds back 180000 unacked messages (~24.0 MiB), 2 retries (~2.0 KiB)); Redis full: publishing refused since "), p.Text)
	assert.Equal(t, "streamq stats orders audit", p.Command)
	assert.NotContains(t, p.Text, "furthest behind")

	high := admin.TopicMemory{Topic: "events", HighWater: 0.8,
		Servers: []admin.ServerMemory{{Addr: "r:6379", Used: 36 << 20, Max: 40 << 20, Percent: 90, High: true}}}
	v = okHealth()
	memoryHealth(&v, high, use, now)
	require.Len(t, v.Problems, 1)
	assert.Equal(t, "memory-high", v.Problems[0].Code)
	assert.True(t, strings.HasPrefix(v.Problems[0].Text, "Redis memory is high because of group audit on topic orders (it holds back "), v.Problems[0].Text)
	high.Topic = "orders"
	v = okHealth()
	memoryHealth(&v, high, use, now)
	assert.Contains(t, v.Problems[0].Text, "above the 80 % high-water mark of maxmemory; group audit holds back 180000 unacked messages", "at the high-water mark the cause is named already")

	v = okHealth()
	memoryHealth(&v, full("events"), &admin.MemoryUse{}, now)
	assert.Equal(t, sevCritical, v.State)
	assert.Contains(t, v.Problems[0].Text, "no group holds memory back")
}
