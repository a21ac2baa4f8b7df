package streamq_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// fakeInfo is a go-redis hook that replaces the reply of INFO server with one naming
// version, and counts the INFO commands sent.
type fakeInfo struct {
	version string // "" keeps the real reply
	infos   atomic.Int64
}

func (*fakeInfo) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *fakeInfo) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		f.rewrite(cmd)
		return err
	}
}

func (f *fakeInfo) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			f.rewrite(cmd)
		}
		return err
	}
}

func (f *fakeInfo) rewrite(cmd redis.Cmder) {
	if cmd.Name() != "info" {
		return
	}
	f.infos.Add(1)
	if c, ok := cmd.(*redis.StringCmd); ok && f.version != "" && c.Err() == nil && cmd.Args()[1] == "server" {
		c.SetVal("# Server\r\nredis_version:" + f.version + "\r\nredis_mode:standalone\r\n")
	}
}

// A Redis older than MinRedisVersion fails the first Publish, Subscribe and SubscribeInitialize
// with ErrUnsupportedServer naming the version found and the one needed, before anything is
// written.
func TestServerCheckRefusesOldRedis(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	hook := &fakeInfo{version: "6.2.14"}
	client.AddHook(hook)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
	err := pub.Publish("old", message.NewMessage(watermill.NewUUID(), []byte("x")))
	require.ErrorIs(t, err, streamq.ErrUnsupportedServer)
	assert.Contains(t, err.Error(), "Redis 6.2.14 at "+client.Options().Addr)
	assert.Contains(t, err.Error(), "needs Redis "+streamq.MinRedisVersion+" or later")
	assert.NotErrorIs(t, err, streamq.ErrInvalidConfig)

	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	_, err = sub.Subscribe(context.Background(), "old")
	require.ErrorIs(t, err, streamq.ErrUnsupportedServer)
	require.ErrorIs(t, sub.SubscribeInitialize("old"), streamq.ErrUnsupportedServer)

	n, err := client.Exists(context.Background(), keys.New("", "").Registry()).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is written to an unsupported server")
}

// The check runs once per client, shared by its Publishers and Subscribers (one pipeline of
// INFO server and INFO memory), and a maxmemory-policy that evicts is logged once, saying what
// eviction would break.
func TestServerCheckWarnsOnceAboutEviction(t *testing.T) {
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	hook := &fakeInfo{}
	client.AddHook(hook)
	logs := watermill.NewCaptureLogger()

	topic := "evicting"
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		// the memory watch (its own INFO memory every Memory.Interval) is off: only the check is counted
		pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2, Memory: streamq.MemoryWatch{Interval: -1}}, logs)
		require.NoError(t, err)
		t.Cleanup(func() { _ = pub.Close() })
		for j := 0; j < 5; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				assert.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
			}()
		}
	}
	wg.Wait()
	subCfg := streamqtest.FastSub(client, "g")
	subCfg.Memory.Interval = -1
	sub, err := streamq.NewSubscriber(subCfg, logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	require.NoError(t, sub.SubscribeInitialize(topic))

	assert.Equal(t, int64(2), hook.infos.Load(), "INFO server and INFO memory, once for the client")
	warnings := capturedInfo(logs, "maxmemory-policy")
	require.Len(t, warnings, 1)
	fields := warnings[0].Fields
	assert.Equal(t, "allkeys-lru", fields["maxmemory_policy"])
	assert.Equal(t, client.Options().Addr, fields["server"])
	for _, risk := range []string{"leases", "retry", "payloads", "stream"} {
		assert.Contains(t, fields["risk"], risk)
	}

	// Another client of the same server is checked, and warned about, on its own.
	other := redis.NewClient(&redis.Options{Addr: client.Options().Addr, DisableIdentity: true})
	t.Cleanup(func() { _ = other.Close() })
	pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: other}, logs)
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
	assert.Len(t, capturedInfo(logs, "maxmemory-policy"), 2)
}

// On a Cluster every master is checked: the one master that evicts is named.
func TestServerCheckEveryClusterMaster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	client := cluster.Client(t)
	ctx := context.Background()
	masters, err := cluster.Masters()
	require.NoError(t, err)
	require.Len(t, masters, 3)
	evicting := masters[len(masters)-1]
	node := redis.NewClient(&redis.Options{Addr: evicting, DisableIdentity: true})
	t.Cleanup(func() { _ = node.Close() })
	require.NoError(t, node.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err())

	logs := watermill.NewCaptureLogger()
	pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, logs)
	require.NoError(t, pub.Publish("cluster-check", message.NewMessage(watermill.NewUUID(), []byte("x"))))
	warnings := capturedInfo(logs, "maxmemory-policy")
	require.Len(t, warnings, 1)
	assert.Equal(t, evicting, warnings[0].Fields["server"])
	assert.Equal(t, "volatile-lru", warnings[0].Fields["maxmemory_policy"])
}

// An ACL user without INFO and CONFIG (as managed Redis often has) publishes and consumes
// normally: the check is skipped, at debug level.
func TestServerCheckSkippedForUserWithoutInfo(t *testing.T) {
	srv, admin := streamqtest.StartRedis(t)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">secret", "~*", "&*", "+@all", "-info", "-config").Err())
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "app", Password: "secret", DisableIdentity: true})
	t.Cleanup(func() { _ = client.Close() })
	require.True(t, redis.IsPermissionError(client.Info(ctx, "server").Err()), "the user must not be allowed INFO")
	require.True(t, redis.IsPermissionError(client.ConfigGet(ctx, "maxmemory-policy").Err()), "nor CONFIG")

	logs := watermill.NewCaptureLogger()
	topic := "acl"
	pub := newTestPublisherLogged(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2}, logs)
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), logs)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := sub.Subscribe(subCtx, topic)
	require.NoError(t, err)
	sent := message.NewMessage(watermill.NewUUID(), []byte("hello"))
	require.NoError(t, pub.Publish(topic, sent))
	select {
	case got := <-ch:
		assert.Equal(t, sent.UUID, got.UUID)
		got.Ack()
	case <-time.After(30 * time.Second):
		t.Fatal("the message was not delivered")
	}

	skipped := capturedDebug(logs, "Redis server check skipped")
	require.Len(t, skipped, 1, "logged once for the client")
	assert.Contains(t, skipped[0].Fields["reply"], "NOPERM")
	assert.Empty(t, capturedInfo(logs, "maxmemory-policy"))
	assert.Empty(t, logs.Captured()[watermill.ErrorLogLevel])
}

// The one minimum version, in the root package and in internal/server.
func TestMinRedisVersionMatchesServerCheck(t *testing.T) {
	assert.Equal(t, streamq.MinRedisVersion, server.MinVersion.String())
}

func newTestPublisherLogged(t testing.TB, cfg streamq.PublisherConfig, logger watermill.LoggerAdapter) *streamq.Publisher {
	t.Helper()
	pub, err := streamq.NewPublisher(cfg, logger)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

func capturedInfo(logs *watermill.CaptureLoggerAdapter, substr string) []watermill.CapturedMessage {
	return captured(logs, watermill.InfoLogLevel, substr)
}

func capturedDebug(logs *watermill.CaptureLoggerAdapter, substr string) []watermill.CapturedMessage {
	return captured(logs, watermill.DebugLogLevel, substr)
}

func captured(logs *watermill.CaptureLoggerAdapter, level watermill.LogLevel, substr string) []watermill.CapturedMessage {
	var out []watermill.CapturedMessage
	for _, m := range logs.Captured()[level] {
		if strings.Contains(m.Msg, substr) {
			out = append(out, m)
		}
	}
	return out
}
