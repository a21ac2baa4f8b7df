package scenario_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// A Redis that is not there: Publish and Subscribe fail with a clear error within the
// client's timeouts instead of hanging.
func TestRedisDownAtStartFailsFastAndClearly(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	client := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: 1})
	defer client.Close()

	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	start := time.Now()
	err = pub.Publish("down", message.NewMessage(watermill.NewUUID(), []byte("x")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "down", "the error names the topic")
	assert.Less(t, time.Since(start), 5*time.Second)

	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	start = time.Now()
	_, err = sub.Subscribe(context.Background(), "down")
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// Redis dies under a running subscription and comes back (AOF): no hot loop, no goroutine
// growth while it is down, and everything published before and after is delivered.
func TestRedisOutageMidRunRecovers(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	srv, _ := streamqtest.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer client.Close()
	topic := "outage"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	rec := streamqtest.NewRecorder()
	streamqtest.ConsumeInto(ch, rec)
	streamqtest.PublishKeyed(t, pub, topic, 0, 40, 8)
	rec.WaitUnique(t, 40, 10*time.Second)

	require.NoError(t, srv.Kill())
	down := runtime.NumGoroutine()
	require.Never(t, func() bool { return runtime.NumGoroutine() > down+20 }, 2*time.Second, 100*time.Millisecond,
		"goroutines grow while Redis is down")
	require.NoError(t, srv.Restart())

	require.Eventually(t, func() bool {
		m := message.NewMessage(watermill.NewUUID(), []byte("probe"))
		m.Metadata.Set("seq", "-1")
		return pub.Publish(topic, m) == nil
	}, 10*time.Second, 100*time.Millisecond)
	streamqtest.PublishKeyed(t, pub, topic, 40, 80, 8)
	rec.WaitUnique(t, 41, 20*time.Second) // the probe and 40 more
}
