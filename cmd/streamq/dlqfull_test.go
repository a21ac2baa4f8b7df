package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestCLIReplayWhileRedisIsFull: dlq replay and replay-all on a Redis at maxmemory say that
// Redis is full and what frees memory, without the server's raw reply or an internal key;
// they exit 1 and replay nothing.
func TestCLIReplayWhileRedisIsFull(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic = "fullreplay"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 2))
	d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: 1, Group: "payments",
		Reason: "retries exhausted (3): card declined", Payload: []byte(`{"order":1}`)})
	require.NoError(t, err)
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, e.client.ConfigSet(e.ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = e.client.ConfigSet(e.ctx, "maxmemory", "0").Err() })

	for _, args := range [][]string{{"dlq", "replay", topic, "1", d.ID}, {"dlq", "replay-all", topic}} {
		r := e.run(args...)
		assert.Equal(t, exitError, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "redis is full: Redis "+e.client.Options().Addr+" refused to replay dead letter "+d.ID, args)
		assert.Contains(t, r.stderr, "Memory frees as consumers catch up", args)
		assert.NotContains(t, r.stderr, "stream:topic", "no internal key")
		assert.NotContains(t, r.stderr, "OOM command")
	}
	assert.Zero(t, e.client.XLen(e.ctx, "stream:topic:{"+topic+":p:1}").Val(), "nothing replayed")
}
