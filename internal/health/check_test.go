package health

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/server"
)

// A server that cannot be reached does not fail the check (the call's own commands report
// it); it is asked again later, not at every call.
func TestCheckPostponedWhenUnreachable(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // connection refused
	t.Cleanup(func() { _ = client.Close() })
	c := &Check{}
	logs := watermill.NewCaptureLogger()
	require.NoError(t, c.Ensure(context.Background(), client, logs))
	assert.False(t, c.done.Load())
	assert.True(t, c.retryAt.After(time.Now()), "asked again after serverRecheckInterval")
	assert.Equal(t, 1, countLogs(logs, watermill.DebugLogLevel, "postponed"))
	require.NoError(t, c.Ensure(context.Background(), client, logs))
	assert.Equal(t, 1, countLogs(logs, watermill.DebugLogLevel, "postponed"), "not asked again before retryAt")
}

// A closed client is the caller's error, and nothing is marked checked.
func TestCheckOfClosedClient(t *testing.T) {
	client := redistest.Start(t).Client(t)
	require.NoError(t, client.Close())
	c := &Check{}
	err := c.Ensure(context.Background(), client, watermill.NopLogger{})
	require.Error(t, err)
	assert.True(t, server.IsClosed(err))
	assert.False(t, c.done.Load())
}

// One check per client: every Publisher and Subscriber of a client shares it, and a checked
// server is not asked again.
func TestCheckOfIsPerClient(t *testing.T) {
	srv := redistest.Start(t)
	a, b := srv.Client(t), srv.Client(t)
	assert.Same(t, CheckOf(a), CheckOf(a))
	assert.NotSame(t, CheckOf(a), CheckOf(b))
	require.NoError(t, CheckOf(a).Ensure(context.Background(), a, watermill.NopLogger{}))
	assert.True(t, CheckOf(a).done.Load())
}
