package dashboard_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
)

// fillRedis sets the env's Redis maxmemory (noeviction) below its used memory, until the
// test ends.
func (e *env) fillRedis() {
	e.t.Helper()
	require.NoError(e.t, e.client.ConfigSet(e.ctx, "maxmemory-policy", "noeviction").Err())
	used, err := e.adm.ServerMemory(e.ctx)
	require.NoError(e.t, err)
	require.NoError(e.t, e.client.ConfigSet(e.ctx, "maxmemory", strconv.FormatInt(used[0].Used/2, 10)).Err())
	e.t.Cleanup(func() { _ = e.client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
}

// TestDLQReplayWhileRedisIsFull: a replay (selected or all) that Redis refuses at maxmemory
// answers 503 with what frees memory, and no internal key; nothing is replayed.
func TestDLQReplayWhileRedisIsFull(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "payments", 2))
	d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "payments", Partition: 1, Group: "workers",
		Reason: "retries exhausted (3): card declined", Payload: []byte(`{"order":1}`)})
	require.NoError(t, err)
	s := e.serve(dashboard.Options{AllowWrites: true})
	e.fillRedis()

	for _, w := range []struct {
		path string
		body map[string]any
	}{
		{"/api/topics/payments/dlq/replay", map[string]any{"entries": []map[string]any{{"partition": 1, "id": d.ID}}}},
		{"/api/topics/payments/dlq/replay-all", map[string]any{}},
	} {
		r := s.write(w.path, w.body)
		require.Equal(t, http.StatusServiceUnavailable, r.status, "%s: %s", w.path, r.body)
		var body struct{ Error string }
		r.json(t, &body)
		assert.Contains(t, body.Error, "redis is full: Redis "+e.client.Options().Addr+" refused to replay dead letter "+d.ID)
		assert.Contains(t, body.Error, "nothing was replayed")
		assert.Contains(t, body.Error, "Memory frees as consumers catch up")
		assert.NotContains(t, body.Error, "stream:topic", "no internal key")
	}
	assert.Empty(t, e.ids("payments", 1), "nothing replayed")
}
