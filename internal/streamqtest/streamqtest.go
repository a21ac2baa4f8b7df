// Package streamqtest holds what the root package's tests (package streamq_test) and the
// process-level scenarios (scenario/) share: Subscribers and Publishers with short intervals
// that close when the test ends, group members and their lease owners, keyed and numbered
// messages, recorders of deliveries, the lease log of static members, Watermill's universal
// suite, and reads of Redis state. Test support only: only tests import it.
package streamqtest

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// FastSub shortens the background intervals so tests converge quickly. The lease lives 5s,
// renewed every 300ms: on a 2-core CI machine running the race detector and dozens of
// redis-servers, one renewal round was measured taking 1.4s, so a 2s lease lapsed there now
// and then, and the partition's next owner delivered again what was in flight (what a lapse
// does, and what tests of exactly-once would read as a bug). Tests that time a takeover set
// a short LeaseTTL of their own.
func FastSub(client redis.UniversalClient, group string) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: group,
		Membership:    streamq.MembershipConfig{LeaseTTL: 5 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Reclaim:       streamq.ReclaimConfig{ScanInterval: time.Second, Idle: 3 * time.Second},
		Read:          streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:      streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:         streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: -1}, MoverInterval: 100 * time.Millisecond}, // nacks retry at once, for ever
	}
}

// NewSubscriber is a Subscriber of cfg, logging through Logger, closed when the test ends.
func NewSubscriber(t testing.TB, cfg streamq.SubscriberConfig) *streamq.Subscriber {
	t.Helper()
	sub, err := streamq.NewSubscriber(cfg, Logger())
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

// NewPublisher is a Publisher of cfg, logging through Logger, closed when the test ends.
func NewPublisher(t testing.TB, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	pub, err := streamq.NewPublisher(cfg, Logger())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

// Logger logs to stderr under go test -v, and nowhere otherwise.
func Logger() watermill.LoggerAdapter {
	if testing.Verbose() {
		return watermill.NewStdLogger(false, false)
	}
	return watermill.NopLogger{}
}

// StartRedis starts a redis-server for one test and returns it with a client.
func StartRedis(t testing.TB) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	return srv, srv.Client(t)
}

// Backend is a Redis deployment a test can run against.
type Backend struct {
	Name  string
	Start func(t testing.TB) redis.UniversalClient // a Redis of the test's own, and a client
}

var (
	// SingleNode is one redis-server.
	SingleNode = Backend{"single", func(t testing.TB) redis.UniversalClient {
		return redistest.Start(t).Client(t)
	}}
	// ThreeMasters is a Redis Cluster of 3 masters without replicas.
	ThreeMasters = Backend{"cluster", func(t testing.TB) redis.UniversalClient {
		return redistest.StartCluster(t, 3, 0).Client(t)
	}}
)

// OnBackends runs test once on a single redis-server and once on a 3-master Redis Cluster,
// as the subtests "single" and "cluster", each with a Redis of its own: the same test
// function proves the same behaviour on both.
func OnBackends(t *testing.T, test func(t *testing.T, client redis.UniversalClient)) {
	t.Helper()
	for _, b := range []Backend{SingleNode, ThreeMasters} {
		t.Run(b.Name, func(t *testing.T) { test(t, b.Start(t)) })
	}
}
