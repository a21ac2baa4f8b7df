package admin_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// limitMemory sets the server's maxmemory (noeviction) to its used memory times
// percentOfUsed/100, 0 for none.
func limitMemory(t *testing.T, client *redis.Client, percentOfUsed int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	limit := int64(0)
	if percentOfUsed > 0 {
		servers, err := mustAdmin(t, client, admin.Options{}).ServerMemory(ctx)
		require.NoError(t, err)
		limit = servers[0].Used * percentOfUsed / 100
	}
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err())
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
}

func mustAdmin(t *testing.T, client *redis.Client, opts admin.Options) *admin.Admin {
	t.Helper()
	adm, err := admin.New(client, opts)
	require.NoError(t, err)
	return adm
}

// TopicMemory: each server's used and max memory against the high-water mark, and the
// topic's refused publishes, which a Publisher refused for memory records.
func TestTopicMemory(t *testing.T) {
	e := newOpEnv(t)
	const topic = "orders"
	e.create(topic, 2)
	addr := e.client.Options().Addr

	m, err := e.adm.TopicMemory(e.ctx, topic)
	require.NoError(t, err)
	require.Len(t, m.Servers, 1)
	s := m.Servers[0]
	assert.Equal(t, addr, s.Addr)
	assert.Positive(t, s.Used)
	assert.Zero(t, s.Max, "no maxmemory")
	assert.False(t, s.High || s.Full || m.Full() || m.Refused())
	assert.Equal(t, admin.DefaultMemoryHighWater, m.HighWater)
	assert.Contains(t, s.String(), "(no maxmemory)")

	limitMemory(t, e.client, 111) // used at 90 %
	m, err = e.adm.TopicMemory(e.ctx, topic)
	require.NoError(t, err)
	s = m.Servers[0]
	assert.Positive(t, s.Max)
	assert.InDelta(t, 90, s.Percent, 5)
	assert.True(t, s.High)
	assert.False(t, s.Full || m.Full())
	assert.Regexp(t, `^\d+\.\d/\d+\.\d (KiB|MiB) \(\d+ %\)$`, s.String())
	noMark := mustAdmin(t, e.client, admin.Options{MemoryHighWater: -1})
	servers, err := noMark.ServerMemory(e.ctx)
	require.NoError(t, err)
	assert.False(t, servers[0].High, "no high-water mark")

	limitMemory(t, e.client, 50) // full
	before := time.Now().Add(-time.Second)
	err = e.pub.Publish(topic, opMsg("refused", 0))
	require.ErrorIs(t, err, streamq.ErrRedisFull)
	m, err = e.adm.TopicMemory(e.ctx, topic)
	require.NoError(t, err)
	assert.True(t, m.Servers[0].Full)
	assert.True(t, m.Full())
	require.True(t, m.Refused())
	assert.WithinRange(t, m.RefusedSince, before, time.Now().Add(time.Second))
	assert.Equal(t, m.RefusedSince, m.LastRefused)

	limitMemory(t, e.client, 0) // room again: the record stays until its TTL
	m, err = e.adm.TopicMemory(e.ctx, topic)
	require.NoError(t, err)
	assert.False(t, m.Servers[0].Full)
	assert.True(t, m.Refused(), "refused within RefusalTTL")
	ttl, err := e.client.PTTL(e.ctx, e.space.Refused(topic)).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, admin.RefusalTTL)
	require.NoError(t, e.pub.Publish(topic, opMsg("accepted", 0)))

	_, err = e.adm.TopicMemory(e.ctx, "missing")
	require.ErrorIs(t, err, admin.ErrTopicNotFound)
	since, _, err := e.adm.PublishRefusal(e.ctx, "missing")
	require.NoError(t, err)
	assert.True(t, since.IsZero())
}

func TestMemoryHighWaterOption(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = client.Close() })
	for _, h := range []float64{-0.5, 1.5, -2} {
		_, err := admin.New(client, admin.Options{MemoryHighWater: h})
		require.ErrorIs(t, err, admin.ErrInvalidArgument, "%v", h)
	}
	for h, want := range map[float64]float64{0: 0.8, -1: 0, 0.9: 0.9, 1: 1} {
		adm, err := admin.New(client, admin.Options{MemoryHighWater: h})
		require.NoError(t, err)
		assert.Equal(t, want, adm.MemoryHighWater())
	}
}

// String renders a server's memory in the unit of its maxmemory.
func TestServerMemoryString(t *testing.T) {
	tests := []struct {
		s    admin.ServerMemory
		want string
	}{
		{admin.ServerMemory{Used: 40055000, Max: 41943040, Percent: 95.5}, "38.2/40.0 MiB (96 %)"},
		{admin.ServerMemory{Used: 2516582}, "2.4 MiB (no maxmemory)"},
		{admin.ServerMemory{Used: 900 << 10, Max: 2 << 30, Percent: 0.04}, "0.0/2.0 GiB (0 %)"},
		{admin.ServerMemory{Used: 512, Max: 1000, Percent: 51.2}, "512/1000 B (51 %)"},
		{admin.ServerMemory{Err: context.DeadlineExceeded}, "unknown (context deadline exceeded)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.s.String())
	}
}
