package inspect_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/script"
)

// TestPartitionsMemory: one pipeline reads each partition's length and memory (sampled),
// its DLQ's and each group's retries; missing keys read as empty.
func TestPartitionsMemory(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	s0, d0 := space.PartitionStream("t", 0), space.DLQ("t", 0)
	for range 300 {
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: s0, Values: []any{"payload", strings.Repeat("x", 1000)}}).Err())
	}
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: d0, Values: []any{"reason", "bad"}}).Err())
	retry := inspect.RetryKeys{Set: space.Retry("t", 0, "g"), Items: space.RetryItems("t", 0, "g")}
	require.NoError(t, client.ZAdd(ctx, retry.Set, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err())
	require.NoError(t, client.HSet(ctx, retry.Items, "a", strings.Repeat("y", 500), "b", "z").Err())
	none := inspect.RetryKeys{Set: space.Retry("t", 0, "h"), Items: space.RetryItems("t", 0, "h")}

	got, err := inspect.PartitionsMemory(ctx, client, []inspect.MemoryKeys{
		{Stream: s0, DLQ: d0, Retries: []inspect.RetryKeys{retry, none}},
		{Stream: space.PartitionStream("t", 1), DLQ: space.DLQ("t", 1)},
	})
	require.NoError(t, err)
	require.Len(t, got, 2)
	p := got[0]
	assert.Equal(t, int64(300), p.Entries)
	assert.Greater(t, p.StreamBytes, int64(300*1000), "the entries hold their payloads")
	assert.Less(t, p.StreamBytes, int64(2*300*1000))
	assert.InDelta(t, float64(p.StreamBytes)/300, p.EntryBytes(), 1e-9)
	assert.Equal(t, int64(1), p.DeadLetters)
	assert.Positive(t, p.DeadLetterBytes)
	require.Len(t, p.Retries, 2)
	assert.Equal(t, int64(2), p.Retries[0].Count)
	assert.Greater(t, p.Retries[0].Bytes, int64(500))
	assert.Equal(t, inspect.RetryMemory{}, p.Retries[1], "no retry set: none")
	assert.Equal(t, inspect.PartitionMemory{}, got[1], "a partition never written")
	assert.Zero(t, got[1].EntryBytes())
}

// TestOutagesTellsARefusedWrite: a record reads as written; where Redis refuses writes (here
// NOREPLICAS) a partition without a record reads with the refusal.
func TestOutagesTellsARefusedWrite(t *testing.T) {
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	require.NoError(t, outage.Write(ctx, client, "o1", outage.Record{Member: "w", Reason: "503"}, time.Minute))
	got, err := inspect.Outages(ctx, client, []string{"o1", "o2"})
	require.NoError(t, err)
	require.NotNil(t, got[0].Record)
	assert.Equal(t, "503", got[0].Record.Reason)
	assert.Nil(t, got[1].Record)
	assert.NoError(t, got[0].WriteRefused)
	assert.NoError(t, got[1].WriteRefused)

	require.NoError(t, client.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "min-replicas-to-write", "0").Err() })
	got, err = inspect.Outages(ctx, client, []string{"o1", "o2"})
	require.NoError(t, err)
	assert.NotNil(t, got[0].Record, "the record still reads")
	assert.ErrorIs(t, got[1].WriteRefused, outage.ErrRefused)
}

// TestGroupViewReadsProcessesAndLastBeat: a group view names each member's host and PID and
// the group's last beat, which stays after the member left.
func TestGroupViewReadsProcessesAndLastBeat(t *testing.T) {
	client := redistest.Start(t).Client(t)
	script.Compat(client)
	ctx := context.Background()
	space := keys.New("", "")
	m := member.NewMembership(client, space.Members("t", "g"), space.MemberCaps("t", "g"), member.Member{Name: "w1"}, time.Minute)
	_, err := m.Heartbeat(ctx)
	require.NoError(t, err)
	q := inspect.GroupQuery{Group: "g", Members: space.Members("t", "g"), Caps: space.MemberCaps("t", "g")}
	g, err := inspect.GroupView(ctx, client, q)
	require.NoError(t, err)
	require.Len(t, g.Heartbeats, 1)
	host, _ := os.Hostname()
	assert.Equal(t, host, g.Heartbeats[0].Process.Host)
	assert.Equal(t, os.Getpid(), g.Heartbeats[0].Process.PID)
	require.NotNil(t, g.Last)
	assert.Equal(t, "w1", g.Last.Member)

	require.NoError(t, m.Leave(ctx))
	g, err = inspect.GroupView(ctx, client, q)
	require.NoError(t, err)
	assert.Empty(t, g.Heartbeats)
	require.NotNil(t, g.Last)
	assert.True(t, g.Last.Left)
	beats, err := inspect.Beats(ctx, client, space.Beats("t"))
	require.NoError(t, err)
	assert.Equal(t, *g.Last, beats["g"])
}
