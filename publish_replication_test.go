package streamq_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

func TestPublisherConfigReplicas(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = cluster.Close() })
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	t.Cleanup(func() { _ = ring.Close() })
	short := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ReadTimeout: time.Second})
	t.Cleanup(func() { _ = short.Close() })
	unbounded := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ReadTimeout: -1})
	t.Cleanup(func() { _ = unbounded.Close() })
	tests := []struct {
		name    string
		cfg     streamq.PublisherConfig
		invalid string // "" when valid
	}{
		{name: "off", cfg: streamq.PublisherConfig{Client: client}},
		{name: "one replica, default timeout", cfg: streamq.PublisherConfig{Client: client, Replication: streamq.ReplicationConfig{MinReplicas: 1}}},
		{name: "timeout at half the read timeout", cfg: streamq.PublisherConfig{Client: short, Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: 500 * time.Millisecond}}},
		{name: "no read timeout", cfg: streamq.PublisherConfig{Client: unbounded, Replication: streamq.ReplicationConfig{MinReplicas: 2, Timeout: time.Minute}}},
		{name: "negative MinReplicas", cfg: streamq.PublisherConfig{Client: client, Replication: streamq.ReplicationConfig{MinReplicas: -1}}, invalid: "MinReplicas must not be negative"},
		{name: "negative Replication.Timeout", cfg: streamq.PublisherConfig{Client: client, Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: -time.Second}}, invalid: "Replication.Timeout must not be negative"},
		{name: "sub-millisecond timeout", cfg: streamq.PublisherConfig{Client: client, Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: 500 * time.Microsecond}}, invalid: "at least 1ms"},
		{name: "timeout above half the read timeout", cfg: streamq.PublisherConfig{Client: short, Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: 600 * time.Millisecond}}, invalid: "half the client's ReadTimeout 1s"},
		{name: "cluster client", cfg: streamq.PublisherConfig{Client: cluster, Replication: streamq.ReplicationConfig{MinReplicas: 1}}, invalid: "not a *redis.ClusterClient"},
		{name: "ring client", cfg: streamq.PublisherConfig{Client: ring, Replication: streamq.ReplicationConfig{MinReplicas: 1}}, invalid: "not a *redis.Ring"},
		{name: "a timeout alone does nothing", cfg: streamq.PublisherConfig{Client: cluster, Replication: streamq.ReplicationConfig{Timeout: time.Hour}}, invalid: "Replication.Timeout 1h0m0s needs Replication.MinReplicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, err := streamq.NewPublisher(tt.cfg, nil)
			if tt.invalid == "" {
				require.NoError(t, err)
				_ = pub.Close()
				return
			}
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.invalid)
		})
	}

	c := streamq.PublisherConfig{Client: client, Replication: streamq.ReplicationConfig{MinReplicas: 1}}
	streamq.SetDefaults(&c)
	assert.Equal(t, streamq.DefaultReplicaTimeout, c.Replication.Timeout)
	c = streamq.PublisherConfig{Client: client}
	streamq.SetDefaults(&c)
	assert.Zero(t, c.Replication.Timeout, "no timeout without MinReplicas")
}

// Under MinReplicas a Publish that returned nil is on the replica, whatever it wrote (plain
// appends, offloaded payloads, delayed messages, concurrent calls coalesced into pipelines);
// with the replica stalled, Publish returns a *ReplicationError and the message is on the
// master; once the replica is back, publishes succeed again.
func TestPublishWaitsForReplicas(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	replica := redistest.StartReplica(t, master)
	client, onReplica := master.Client(t), replica.Client(t)
	ctx := context.Background()
	const timeout = 300 * time.Millisecond
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4, Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: timeout},
		Payloads: streamq.PayloadConfig{Threshold: 1024}})
	topic := "durable"
	stream := func(p int) string { return keys.New("", "").PartitionStream(topic, p) }
	length := func(c *redis.Client) int64 {
		t.Helper()
		var n int64
		for p := 0; p < 4; p++ {
			l, err := c.XLen(ctx, stream(p)).Result()
			require.NoError(t, err)
			n += l
		}
		return n
	}

	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x"))))
		}()
	}
	wg.Wait()
	batch := make([]*message.Message, 20)
	for i := range batch {
		batch[i] = message.NewMessage(watermill.NewUUID(), []byte("y"))
	}
	batch[0].Payload = []byte(strings.Repeat("p", 4096)) // offloaded
	require.NoError(t, pub.Publish(topic, batch...))
	delayed := message.NewMessage(watermill.NewUUID(), []byte("later"))
	delay.Message(delayed, delay.For(time.Hour))
	require.NoError(t, client.ScriptFlush(ctx).Err()) // the scripts go again after NOSCRIPT
	require.NoError(t, pub.Publish(topic, delayed))
	assert.Equal(t, int64(70), length(onReplica), "every append confirmed by WAIT is on the replica")
	parked, err := onReplica.ZCard(ctx, keys.New("", "").Delay(topic, 0)).Result()
	require.NoError(t, err)
	more, _ := onReplica.ZCard(ctx, keys.New("", "").Delay(topic, 1)).Result()
	parked += more
	for p := 2; p < 4; p++ {
		n, _ := onReplica.ZCard(ctx, keys.New("", "").Delay(topic, p)).Result()
		parked += n
	}
	assert.Equal(t, int64(1), parked, "the delayed message is parked on the replica too")

	require.NoError(t, replica.Pause())
	err = pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("stalled")))
	require.ErrorIs(t, err, streamq.ErrNotReplicated)
	var re *streamq.ReplicationError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, streamq.ReplicationError{Wanted: 1, Acked: 0, Timeout: timeout}, *re)
	assert.Equal(t, int64(71), length(client), "the message was written to the master")

	require.NoError(t, replica.Resume())
	require.Eventually(t, func() bool {
		return pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("back"))) == nil
	}, 20*time.Second, 10*time.Millisecond, "publishes succeed once the replica is back")
}

// Asking for more replicas than there are fails every Publish with the counts.
func TestPublishNeedsMoreReplicasThanThereAre(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	redistest.StartReplica(t, master)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: master.Client(t), Replication: streamq.ReplicationConfig{MinReplicas: 2, Timeout: 50 * time.Millisecond}})
	err := pub.Publish("few", message.NewMessage(watermill.NewUUID(), []byte("x")))
	var re *streamq.ReplicationError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2, re.Wanted)
	assert.Equal(t, 1, re.Acked)
	assert.True(t, errors.Is(err, streamq.ErrNotReplicated))
}

// pipelineRecorder is a go-redis hook recording the command names of every pipeline.
type pipelineRecorder struct {
	mu        sync.Mutex
	pipelines [][]string
}

func (*pipelineRecorder) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (r *pipelineRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
		}
		r.mu.Lock()
		r.pipelines = append(r.pipelines, names)
		r.mu.Unlock()
		return next(ctx, cmds)
	}
}

// WAIT is sent once per pipeline, after its writes: one call of 100 messages is one
// pipeline of 100 XADDs and one WAIT, and concurrent calls share their pipelines' WAITs.
func TestPublishSendsOneWaitPerPipeline(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	redistest.StartReplica(t, master)
	client := master.Client(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8, Replication: streamq.ReplicationConfig{MinReplicas: 1}, Trim: streamq.TrimConfig{MaxLen: -1},
		Idempotency: streamq.IdempotencyConfig{Window: -1}}) // plain XADDs: the commands are named below
	require.NoError(t, pub.Publish("waits", message.NewMessage(watermill.NewUUID(), []byte("warm")))) // check, register
	rec := &pipelineRecorder{}
	client.AddHook(rec)

	msgs := make([]*message.Message, 100)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("x"))
	}
	require.NoError(t, pub.Publish("waits", msgs...))
	require.Len(t, rec.pipelines, 1)
	want := append(make([]string, 0, 101), strings.Split(strings.Repeat("xadd ", 100)+"wait", " ")...)
	assert.Equal(t, want, rec.pipelines[0])

	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, pub.Publish("waits", message.NewMessage(watermill.NewUUID(), []byte("x"))))
		}()
	}
	wg.Wait()
	xadds := 0
	for _, p := range rec.pipelines[1:] {
		require.Equal(t, "wait", p[len(p)-1], "WAIT ends every pipeline")
		for _, name := range p[:len(p)-1] {
			require.Equal(t, "xadd", name)
			xadds++
		}
	}
	assert.Equal(t, 200, xadds)
	t.Logf("200 concurrent calls in %d pipelines, one WAIT each", len(rec.pipelines)-1)
}

// BenchmarkPublishReplicated measures what MinReplicas 1 costs, on a master with one replica
// running in both cases: "serial" is one goroutine publishing one message per call (ns/op is
// a Publish's latency), "parallel" is BenchmarkPublishParallel (single-message calls from 64
// goroutines, coalesced into pipelines), "parallel-8-flushers" the same with 8 pipelines in
// flight instead of defaultFlushers, "batched" 100 messages per call from 64 goroutines.
func BenchmarkPublishReplicated(b *testing.B) {
	master := redistest.Start(b)
	redistest.StartReplica(b, master)
	client := master.Client(b)
	payload := make([]byte, 64)
	runs := []struct {
		name     string
		parallel bool
		perCall  int
		flushers int
	}{{"serial", false, 1, 0}, {"parallel", true, 1, 0}, {"parallel-8-flushers", true, 1, 8}, {"batched", true, 100, 0}}
	for _, run := range runs {
		for _, replicas := range []int{0, 1} {
			b.Run(run.name+"/min-replicas="+strconv.Itoa(replicas), func(b *testing.B) {
				pub := streamqtest.NewPublisher(b, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8, Trim: streamq.TrimConfig{MaxLen: -1},
					Replication: streamq.ReplicationConfig{MinReplicas: replicas}, Pipeline: streamq.PipelineConfig{Flushers: run.flushers}})
				if err := pub.Publish("bench", message.NewMessage(watermill.NewUUID(), payload)); err != nil {
					b.Fatal(err) // the server check and the topic's registration, outside the timing
				}
				publish := func(msgs []*message.Message) bool {
					for i := range msgs {
						msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
					}
					if err := pub.Publish("bench", msgs...); err != nil {
						b.Error(err)
						return false
					}
					return true
				}
				b.ReportAllocs()
				b.ResetTimer()
				if run.parallel {
					b.SetParallelism(32)
					b.RunParallel(func(pb *testing.PB) {
						msgs := make([]*message.Message, run.perCall)
						for pb.Next() {
							if !publish(msgs) {
								return
							}
						}
					})
				} else {
					msgs := make([]*message.Message, run.perCall)
					for i := 0; i < b.N; i++ {
						if !publish(msgs) {
							break
						}
					}
				}
				b.ReportMetric(float64(b.N*run.perCall)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}
