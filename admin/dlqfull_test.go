package admin_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// TestReplayAtMaxmemory: at maxmemory a replay (one or all) is a *RedisFullError
// (streamq.ErrRedisFull) that names the server's memory and what frees memory, and no
// internal key; nothing is replayed; once memory is freed the same replay goes through.
func TestReplayAtMaxmemory(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t)
	const topic = "fullreplay"
	e.create(topic, 2)
	d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: 1, Group: "payments",
		Reason: "retries exhausted (3): card declined", Payload: []byte(`{"order":1}`)})
	require.NoError(t, err)
	stream := e.space.PartitionStream(topic, 1)

	limitMemory(t, e.client, 50)
	_, err = e.adm.ReplayDeadLetter(e.ctx, topic, 1, d.ID, admin.ReplayOptions{})
	require.ErrorIs(t, err, streamq.ErrRedisFull)
	var full *admin.RedisFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, topic, full.Topic)
	assert.Equal(t, 1, full.Partition)
	assert.Equal(t, d.ID, full.ID)
	assert.Equal(t, e.client.Options().Addr, full.Server.Addr)
	assert.True(t, full.Server.Full, "the server's memory when it refused")
	msg := err.Error()
	for _, want := range []string{"redis is full: Redis " + full.Server.Addr + " refused to replay dead letter " + d.ID +
		` to partition 1 of "fullreplay" at maxmemory, using `, "nothing was replayed", "Memory frees as consumers catch up",
		"streamq dlq delete", "raise maxmemory"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "stream:topic", "no internal key")
	assert.NotContains(t, msg, "OOM command")

	n, err := e.adm.ReplayAll(e.ctx, topic, 0, nil, admin.ReplayOptions{})
	require.ErrorAs(t, err, &full)
	assert.Zero(t, n)
	assert.Zero(t, e.client.XLen(e.ctx, stream).Val(), "nothing replayed")
	after, err := e.adm.DLQEntry(e.ctx, topic, 1, d.ID)
	require.NoError(t, err)
	assert.True(t, after.ReplayedAt.IsZero(), "not marked as replayed")

	limitMemory(t, e.client, 0)
	_, err = e.adm.ReplayDeadLetter(e.ctx, topic, 1, d.ID, admin.ReplayOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), e.client.XLen(e.ctx, stream).Val())
	assert.False(t, errors.Is(err, streamq.ErrRedisFull))
}
