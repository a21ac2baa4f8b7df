package streamq_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// fastSub shortens the background intervals so tests converge quickly.
func fastSub(client redis.UniversalClient, group string) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:        client,
		ConsumerGroup: group,
		Membership:    streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Reclaim:       streamq.ReclaimConfig{ScanInterval: time.Second, Idle: 3 * time.Second},
		Read:          streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:      streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:         streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: -1}, MoverInterval: 100 * time.Millisecond}, // nacks retry at once, for ever
	}
}

func newTestSubscriber(t testing.TB, cfg streamq.SubscriberConfig) *streamq.Subscriber {
	t.Helper()
	sub, err := streamq.NewSubscriber(cfg, testLogger())
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func newTestPublisher(t testing.TB, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	pub, err := streamq.NewPublisher(cfg, testLogger())
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

// backend is a Redis deployment a test can run against.
type backend struct {
	name  string
	start func(t testing.TB) redis.UniversalClient // a Redis of the test's own, and a client
}

var (
	// singleNode is one redis-server.
	singleNode = backend{"single", func(t testing.TB) redis.UniversalClient {
		return redistest.Start(t).Client(t)
	}}
	// threeMasters is a Redis Cluster of 3 masters without replicas.
	threeMasters = backend{"cluster", func(t testing.TB) redis.UniversalClient {
		return redistest.StartCluster(t, 3, 0).Client(t)
	}}
)

// onBackends runs test once on a single redis-server and once on a 3-master Redis Cluster,
// as the subtests "single" and "cluster", each with a Redis of its own: the same test
// function proves the same behaviour on both.
func onBackends(t *testing.T, test func(t *testing.T, client redis.UniversalClient)) {
	t.Helper()
	for _, b := range []backend{singleNode, threeMasters} {
		t.Run(b.name, func(t *testing.T) { test(t, b.start(t)) })
	}
}

// forEachMaster calls fn with a client of every master of a cluster client, or with the
// client itself when it is a single node: for commands that only see one node's keys (SCAN,
// SCRIPT FLUSH, INFO).
func forEachMaster(t testing.TB, client redis.UniversalClient, fn func(ctx context.Context, node *redis.Client) error) {
	t.Helper()
	ctx := context.Background()
	switch c := client.(type) {
	case *redis.ClusterClient:
		require.NoError(t, c.ForEachMaster(ctx, fn))
	case *redis.Client:
		require.NoError(t, fn(ctx, c))
	default:
		t.Fatalf("unsupported client %T", client)
	}
}

// logLine is one line a captureLogger recorded.
type logLine struct {
	level  string // "error", "info", "debug" or "trace"
	msg    string
	fields watermill.LogFields
}

// captureLogger records every log line, safe for concurrent use (watermill's
// CaptureLoggerAdapter hands out its map unlocked). Children made by With share the record.
type captureLogger struct {
	rec    *logRecord
	fields watermill.LogFields
}

type logRecord struct {
	mu    sync.Mutex
	lines []logLine
}

func newCaptureLogger() *captureLogger { return &captureLogger{rec: &logRecord{}} }

func (c *captureLogger) add(level, msg string, err error, fields watermill.LogFields) {
	all := c.fields.Add(fields)
	if err != nil {
		all = all.Add(watermill.LogFields{"err": err})
	}
	c.rec.mu.Lock()
	c.rec.lines = append(c.rec.lines, logLine{level, msg, all})
	c.rec.mu.Unlock()
}

func (c *captureLogger) Error(msg string, err error, fields watermill.LogFields) {
	c.add("error", msg, err, fields)
}
func (c *captureLogger) Info(msg string, fields watermill.LogFields) { c.add("info", msg, nil, fields) }
func (c *captureLogger) Debug(msg string, fields watermill.LogFields) {
	c.add("debug", msg, nil, fields)
}
func (c *captureLogger) Trace(msg string, fields watermill.LogFields) {
	c.add("trace", msg, nil, fields)
}

func (c *captureLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return &captureLogger{rec: c.rec, fields: c.fields.Add(fields)}
}

// matching returns the lines of level whose message contains part.
func (c *captureLogger) matching(level, part string) []logLine {
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	var out []logLine
	for _, l := range c.rec.lines {
		if l.level == level && strings.Contains(l.msg, part) {
			out = append(out, l)
		}
	}
	return out
}
