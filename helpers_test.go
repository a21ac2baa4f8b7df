package streamq

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// fastSub shortens the background intervals so tests converge quickly.
func fastSub(client redis.UniversalClient, group string) SubscriberConfig {
	return SubscriberConfig{
		Client:              client,
		ConsumerGroup:       group,
		LeaseTTL:            2 * time.Second,
		RenewInterval:       300 * time.Millisecond,
		RebalanceInterval:   150 * time.Millisecond,
		PendingScanInterval: time.Second,
		ClaimIdle:           3 * time.Second,
		BlockTime:           50 * time.Millisecond,
		CloseTimeout:        2 * time.Second,
		RetryPolicy:         ExponentialBackoff{Attempts: -1}, // nacks retry at once, for ever
		RetryMoverInterval:  100 * time.Millisecond,
	}
}

func newTestSubscriber(t testing.TB, cfg SubscriberConfig) *Subscriber {
	t.Helper()
	sub, err := NewSubscriber(cfg, testLogger())
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func newTestPublisher(t testing.TB, cfg PublisherConfig) *Publisher {
	t.Helper()
	pub, err := NewPublisher(cfg, testLogger())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

func testLogger() watermill.LoggerAdapter {
	if testing.Verbose() {
		return watermill.NewStdLogger(false, false)
	}
	return watermill.NopLogger{}
}

// startRedis starts a redis-server for one test and returns it with a client.
func startRedis(t testing.TB) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	return srv, srv.Client(t)
}
