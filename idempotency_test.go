package streamq_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
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
	"github.com/streamq-dev/streamq/internal/chaos"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// lossyNet routes every connection of a client through a chaos proxy per server address,
// and loses replies of those servers on demand.
type lossyNet struct {
	t       testing.TB
	mu      sync.Mutex
	proxies map[string]*chaos.Proxy
	order   []*chaos.Proxy
}

func newLossyNet(t testing.TB) *lossyNet {
	return &lossyNet{t: t, proxies: map[string]*chaos.Proxy{}}
}

func (n *lossyNet) proxy(addr string) (*chaos.Proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.proxies[addr]; ok {
		return p, nil
	}
	p, err := chaos.Listen(addr)
	if err != nil {
		return nil, err
	}
	n.t.Cleanup(func() { _ = p.Close() })
	n.proxies[addr] = p
	n.order = append(n.order, p)
	return p, nil
}

func (n *lossyNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	p, err := n.proxy(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, p.Addr())
}

// lose loses the next k replies of the i-th proxy (modulo the proxies made so far).
func (n *lossyNet) lose(i, k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.order) > 0 {
		n.order[i%len(n.order)].LoseReplies(k)
	}
}

// lossyBackends are a single redis-server and a 3-master cluster, each reached through
// lossy proxies.
var lossyBackends = []struct {
	name  string
	start func(t *testing.T, n *lossyNet) redis.UniversalClient
}{
	{"single", func(t *testing.T, n *lossyNet) redis.UniversalClient {
		srv := redistest.Start(t)
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Dialer: n.dial, DisableIdentity: true, MaxRetries: 1})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}},
	{"cluster", func(t *testing.T, n *lossyNet) redis.UniversalClient {
		return redistest.StartCluster(t, 3, 0).ClientWith(t, func(o *redis.ClusterOptions) { o.Dialer, o.MaxRetries, o.MaxRedirects = n.dial, 1, 1 })
	}},
}

// TestIdempotentPublishThroughLostReplies: 10,000 messages over 8 partitions while the
// network loses replies after Redis ran the commands; go-redis (MaxRetries 1) sends a
// pipeline again when its reply is lost, and the caller publishes a batch again when Publish
// failed (six replies lost in a row). With the idempotent append, by producer and sequence
// (the default) or by UUID, exactly 10,000 entries remain; with it off, the same run appends
// some messages twice.
func TestIdempotentPublishThroughLostReplies(t *testing.T) {
	redistest.SkipShort(t, "10,000 messages three times through a lossy proxy")
	t.Parallel()
	for _, b := range lossyBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name string
				idem streamq.IdempotencyConfig
			}{{"by sequence", streamq.IdempotencyConfig{}}, {"by UUID", streamq.IdempotencyConfig{ByUUID: true}}, {"off", streamq.IdempotencyConfig{Window: -1}}} {
				t.Run(tc.name, func(t *testing.T) {
					n := newLossyNet(t)
					client := b.start(t, n)
					total, unique, lost := publishThroughLosses(t, client, n, tc.idem)
					t.Logf("%s, %s: %d entries for %d messages, %d replies lost", b.name, tc.name, total, unique, lost)
					assert.Equal(t, 10_000, unique, "every message is appended")
					if tc.idem.Window == -1 {
						assert.Greater(t, total, 10_000, "without the idempotent append, resent pipelines append twice")
						return
					}
					assert.Equal(t, 10_000, total, "appended once each")
				})
			}
		})
	}
}

// publishThroughLosses publishes 10,000 messages in batches of 10 from 4 goroutines while
// replies are lost (one before about every 8th batch), retrying each failed batch; it returns
// the entries and distinct UUIDs on the topic's 8 partitions, and how many losses it asked for.
func publishThroughLosses(t *testing.T, client redis.UniversalClient, n *lossyNet, idem streamq.IdempotencyConfig) (int, int, int) {
	const topic, partitions, batches, batch = "idem", 8, 1000, 10
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions, Idempotency: idem})
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("warm-up"))))
	var next, lost, failed atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := next.Add(1); b <= batches; b = next.Add(1) {
				msgs := make([]*message.Message, batch)
				for i := range msgs {
					msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(strconv.FormatInt(b, 10)))
					msgs[i].Metadata.Set("partition_key", fmt.Sprintf("k%d", (int(b)*batch+i)%64))
				}
				if b%8 == 0 { // lose replies before about every 8th batch: one (go-redis sends
					// the pipeline again) or six in a row (more than go-redis sends again, also
					// with a cluster's redirects: Publish fails and the caller sends it again)
					k := 1 + 5*(int(b/8)%2)
					n.lose(int(b/8), k)
					lost.Add(int64(k))
				}
				for err := pub.Publish(topic, msgs...); err != nil; err = pub.Publish(topic, msgs...) {
					failed.Add(1) // the caller sends the same batch again
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d publishes failed and were sent again by the caller", failed.Load())
	require.NotZero(t, failed.Load(), "the caller's retries were exercised")
	total, uuids := 0, map[string]bool{}
	for _, e := range streamqtest.Entries(t, client, topic, partitions) {
		if e.Values[streamq.PayloadField] == "warm-up" {
			continue
		}
		total++
		uuids[e.Values[streamq.UUIDField].(string)] = true
	}
	return total, len(uuids), int(lost.Load())
}

// dupCounter records the duplicates a Publisher dropped (streamq.DuplicateReporter).
type dupCounter struct {
	streamq.NoopMetrics
	mu      sync.Mutex
	dropped map[int]int
}

func (d *dupCounter) DuplicateDropped(_ string, partition int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropped[partition]++
}

func (d *dupCounter) count(p int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped[p]
}

// TestIdempotentPublish: under Idempotency.ByUUID a message published again (the same
// object, a copy, an offloaded one, several times in one call) appends nothing, reports its
// first append and is counted; once the window has passed it is appended again; with the
// window off every publish appends.
func TestIdempotentPublish(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testIdempotentPublish)
}

func testIdempotentPublish(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const topic, partitions = "once", 4
	dups := &dupCounter{dropped: map[int]int{}}
	window := 2 * time.Second // the duplicates below come within it even on a starved machine
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions, Idempotency: streamq.IdempotencyConfig{Window: window, ByUUID: true},
		Payloads: streamq.PayloadConfig{Threshold: 64}, Metrics: dups})
	m := message.NewMessage(watermill.NewUUID(), []byte("once"))
	m.Metadata.Set(streamq.ForcePartitionMetadata, "2")
	require.NoError(t, pub.Publish(topic, m))
	first, ok := streamq.PublishedStreamID(m)
	require.True(t, ok)

	require.NoError(t, pub.Publish(topic, m), "the same message again")
	again, _ := streamq.PublishedStreamID(m)
	assert.Equal(t, first, again, "a duplicate reports the first append")
	cp := m.Copy()
	big := message.NewMessage(watermill.NewUUID(), make([]byte, 100)) // offloaded
	big.Metadata.Set(streamq.ForcePartitionMetadata, "2")
	require.NoError(t, pub.Publish(topic, cp, big, big), "a copy, and one message twice in a call")
	id, _ := streamq.PublishedStreamID(cp)
	assert.Equal(t, first, id)
	stored := storedByUUID(t, client, topic, partitions)
	assert.Len(t, stored[m.UUID], 1, "appended once")
	assert.Len(t, stored[big.UUID], 1, "the offloaded message appended once")
	assert.Equal(t, 3, dups.count(2), "three duplicates dropped")
	space := keys.New("", "")
	n, err := client.ZCard(context.Background(), space.PayloadIndex(topic, 2)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "one payload stored")

	// Remembered for at least the window, at most one and a half.
	time.Sleep(window * 3 / 2)
	require.NoError(t, pub.Publish(topic, m))
	later, _ := streamq.PublishedStreamID(m)
	assert.NotEqual(t, first, later, "after the window, appended again")
	assert.Len(t, storedByUUID(t, client, topic, partitions)[m.UUID], 2)

	plain := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: -1}})
	require.NoError(t, plain.Publish(topic, m, m))
	assert.Len(t, storedByUUID(t, client, topic, partitions)[m.UUID], 4, "with the window off, every publish appends")
}

// TestIdempotencyKeysExpire: under Idempotency.ByUUID the UUIDs are kept in the partition's slot and expire by
// themselves: nothing stays behind once the window has passed.
func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: 200 * time.Millisecond, ByUUID: true}})
	require.NoError(t, pub.Publish("expiring", message.NewMessage(watermill.NewUUID(), []byte("x"))))
	found, err := client.Keys(ctx, keys.New("", "").Idempotency("expiring", 0)+":*").Result()
	require.NoError(t, err)
	require.Len(t, found, 1, "one bucket")
	ttl, err := client.PTTL(ctx, found[0]).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0))
	assert.LessOrEqual(t, ttl, 300*time.Millisecond, "at most one and a half windows")
	require.Eventually(t, func() bool { return client.Exists(ctx, found[0]).Val() == 0 }, 5*time.Second, 20*time.Millisecond)
}
