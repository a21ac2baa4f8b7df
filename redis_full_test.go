package streamq_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// fullScenario is the outage a Redis at maxmemory gives: a group registered but not
// consuming (a consumer that is down) while 1 KiB messages are published in batches of 50
// until Redis refuses them; then the group's Subscriber starts.
type fullScenario struct {
	policy    streamq.AckDeletePolicy
	offload   bool // payloads over Payloads.Threshold: stored in their own keys
	nackFirst bool // the handler nacks each message's first delivery: retries at maxmemory
	deadEvery int  // the handler dead-letters every n-th message (0: none)
	static    bool // the consumer is a static member (its presence is written at maxmemory)
	takeover  bool // a first consumer crashes holding messages: the next one claims them at maxmemory
}

// TestRedisFullDrains is the scenario of a consumer down while Redis fills up: Publish
// returns ErrRedisFull with the topic and memory, the group's Subscriber drains every
// acknowledged message from the full Redis (under every ack-delete policy, with offloaded
// payloads, with retries and dead letters at maxmemory), and then Publish succeeds again with
// no operator step; the batch refused is sent again and each of its messages appended once.
func TestRedisFullDrains(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fills a Redis to its maxmemory: not in -short")
	}
	scenarios := map[string]fullScenario{
		"none":           {policy: streamq.AckDeleteNone},
		"immediate":      {policy: streamq.AckDeleteImmediate},
		"all-groups-ack": {policy: streamq.AckDeleteAllGroups},
		"offloaded":      {policy: streamq.AckDeleteNone, offload: true},
		"retry and dlq":  {policy: streamq.AckDeleteNone, nackFirst: true, deadEvery: 10},
		"static member":  {policy: streamq.AckDeleteNone, static: true},
		"takeover":       {policy: streamq.AckDeleteNone, takeover: true},
	}
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		_, cluster := client.(*redis.ClusterClient)
		for _, name := range []string{"none", "immediate", "all-groups-ack", "offloaded", "retry and dlq", "static member", "takeover"} {
			sc := scenarios[name]
			if cluster && name != "none" && name != "retry and dlq" && name != "takeover" {
				continue // the cluster leg runs the default and the retries; the policies are per script, the same on both
			}
			t.Run(name, func(t *testing.T) {
				runFullScenario(t, client, "full-"+strings.ReplaceAll(name, " ", "-"), sc)
			})
		}
	})
}

// TestRedisFullDrainsWithDefaults is the outage as a new user meets it: maxmemory 40mb with
// noeviction, 4 partitions, the default Publisher and Subscriber configs.
func TestRedisFullDrainsWithDefaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fills a Redis to its maxmemory: not in -short")
	}
	client := redistest.StartWith(t, "maxmemory 40mb", "maxmemory-policy noeviction").Client(t)
	topic := "orders"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	cfg := streamq.SubscriberConfig{Client: client, ConsumerGroup: "payments", DefaultPartitionCount: 4}
	require.NoError(t, streamqtest.NewSubscriber(t, cfg).SubscribeInitialize(topic))
	published, refused, err := fillUntilFull(t, pub, topic)
	require.ErrorIs(t, err, streamq.ErrRedisFull)
	t.Logf("%d messages published before Redis refused a batch: %v", len(published), err)

	received := consumeFull(t, cfg, topic, fullScenario{})
	defer received.stop()
	received.waitFor(t, published, "group payments")
	start := time.Now()
	for err = pub.Publish(topic, refused...); err != nil; err = pub.Publish(topic, refused...) {
		require.ErrorIs(t, err, streamq.ErrRedisFull)
		require.Less(t, time.Since(start), 60*time.Second, "Publish still refused after the drain: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("Publish accepted again %s after the group drained", time.Since(start).Round(10*time.Millisecond))
	all := append(published, uuidsOf(refused)...)
	received.waitFor(t, all, "group payments, with the refused batch sent again")
	received.assertOnce(t, all)
}

func runFullScenario(t *testing.T, client redis.UniversalClient, topic string, sc fullScenario) {
	restore := capMemory(t, client, 6<<20)
	defer restore()

	threshold := 0 // default: 1 KiB payloads stay in the entry
	if sc.offload {
		threshold = 512
	}
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4, Payloads: streamq.PayloadConfig{Threshold: threshold}})
	cfg := streamqtest.FastSub(client, "g")
	cfg.Acks.DeletePolicy = sc.policy
	cfg.Payloads.Threshold = threshold
	cfg.Memory = streamq.MemoryWatch{Interval: 200 * time.Millisecond}
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 5, Base: time.Millisecond, Max: time.Millisecond}
	if sc.static {
		cfg.Membership.ConsumerName, cfg.Membership.StaticMemberGrace = "static-1", 5*time.Second
	}
	require.NoError(t, streamqtest.NewSubscriber(t, cfg).SubscribeInitialize(topic))
	if sc.policy == streamq.AckDeleteAllGroups {
		other := cfg
		other.ConsumerGroup = "g2" // a second group, also down: entries go when both acked
		require.NoError(t, streamqtest.NewSubscriber(t, other).SubscribeInitialize(topic))
	}

	published, refused, fullErr := fillUntilFull(t, pub, topic)
	t.Logf("%d messages published before Redis refused a batch", len(published))
	var full *streamq.RedisFullError
	require.ErrorIs(t, fullErr, streamq.ErrRedisFull)
	require.ErrorAs(t, fullErr, &full)
	assert.Equal(t, topic, full.Topic)
	assert.Positive(t, full.MaxMemory, "the server's maxmemory")
	assert.GreaterOrEqual(t, full.UsedMemory, full.MaxMemory*9/10, "the server's used memory")
	assert.NotEmpty(t, full.Server)
	assert.True(t, redis.HasErrorPrefix(fullErr, "OOM"), "the server's reply is wrapped")

	if sc.takeover {
		crashHolding(t, cfg, topic, 4) // one per partition: each waits for its ack
	}
	received := consumeFull(t, cfg, topic, sc)
	if sc.policy == streamq.AckDeleteAllGroups {
		other := cfg
		other.ConsumerGroup = "g2"
		receivedOther := consumeFull(t, other, topic, sc)
		defer receivedOther.stop()
		receivedOther.waitFor(t, published, "group g2")
	}
	defer received.stop()
	received.waitFor(t, published, "group g")

	// No operator step: publishing resumes once the drained backlog is trimmed. The refused
	// batch is sent again as a caller would, with the same messages.
	start := time.Now()
	var err error
	for err = pub.Publish(topic, refused...); err != nil; err = pub.Publish(topic, refused...) {
		require.ErrorIs(t, err, streamq.ErrRedisFull)
		require.Less(t, time.Since(start), 60*time.Second, "Publish still refused after the drain: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("Publish accepted again %s after the group drained", time.Since(start).Round(10*time.Millisecond))
	all := append(published, uuidsOf(refused)...)
	received.waitFor(t, all, "group g, with the refused batch sent again")
	received.assertOnce(t, all)
}

// capMemory sets maxmemory on every master to its used memory plus room, with noeviction,
// and returns what puts the servers back to no limit.
func capMemory(t *testing.T, client redis.UniversalClient, room int64) func() {
	forEachMaster(t, client, func(ctx context.Context, node *redis.Client) error {
		used := usedMemory(t, ctx, node)
		if err := node.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
			return err
		}
		return node.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+room, 10)).Err()
	})
	return func() {
		forEachMaster(t, client, func(ctx context.Context, node *redis.Client) error {
			return node.ConfigSet(ctx, "maxmemory", "0").Err()
		})
	}
}

func usedMemory(t *testing.T, ctx context.Context, node *redis.Client) int64 {
	info, err := node.Info(ctx, "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("INFO memory without used_memory")
	return 0
}

// fillUntilFull publishes batches of 50 1 KiB messages until Publish fails; it returns the
// UUIDs of the messages published, the batch refused and its error.
func fillUntilFull(t *testing.T, pub *streamq.Publisher, topic string) ([]string, []*message.Message, error) {
	payload := []byte(strings.Repeat("x", 1024))
	var published []string
	for i := 0; ; i++ {
		require.Less(t, i, 100_000, "Redis never refused a publish")
		batch := make([]*message.Message, 50)
		for j := range batch {
			batch[j] = message.NewMessage(watermill.NewUUID(), payload)
			batch[j].Metadata.Set("n", strconv.Itoa(len(published)+j))
		}
		if err := pub.Publish(topic, batch...); err != nil {
			// the messages Redis took before refusing are not published as far as the caller
			// knows: it sends the whole batch again
			return published, batch, err
		}
		published = append(published, uuidsOf(batch)...)
	}
}

func uuidsOf(msgs []*message.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.UUID
	}
	return out
}

// fullConsumer records what a group's handler saw: first deliveries (retry count 0) and
// messages done (acked, or dead-lettered by the handler).
type fullConsumer struct {
	mu    sync.Mutex
	first map[string]map[string]bool // UUID -> stream ids it was delivered from, not as a retry
	done  map[string]bool
	stop  func()
}

// crashHolding subscribes a member of cfg's group that takes n messages without acking them
// and then stops as a killed process would: its partitions and pending entries are taken
// over by the next member, on the full Redis.
func crashHolding(t *testing.T, cfg streamq.SubscriberConfig, topic string, n int) {
	sub, err := streamq.NewSubscriber(cfg, streamqtest.Logger())
	require.NoError(t, err)
	msgs, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	for range n {
		select {
		case <-msgs:
		case <-time.After(30 * time.Second):
			t.Fatal("no message from the full Redis")
		}
	}
	streamq.Crash(sub)
	require.NoError(t, sub.Close())
}

// consumeFull subscribes cfg's group to topic with the scenario's handler.
func consumeFull(t *testing.T, cfg streamq.SubscriberConfig, topic string, sc fullScenario) *fullConsumer {
	sub := streamqtest.NewSubscriber(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	msgs, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err, "Subscribe on a full Redis")
	c := &fullConsumer{first: map[string]map[string]bool{}, done: map[string]bool{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for msg := range msgs {
			c.handle(msg, sc)
		}
	}()
	c.stop = func() { cancel(); wg.Wait() }
	return c
}

func (c *fullConsumer) handle(msg *message.Message, sc fullScenario) {
	retries, _ := streamq.RetryCountFromCtx(msg.Context())
	id, _ := streamq.StreamIDFromCtx(msg.Context())
	n, _ := strconv.Atoi(msg.Metadata.Get("n"))
	c.mu.Lock()
	if retries == 0 { // the message as published, not a retry's copy
		if c.first[msg.UUID] == nil {
			c.first[msg.UUID] = map[string]bool{}
		}
		c.first[msg.UUID][id] = true
	}
	c.mu.Unlock()
	switch {
	case sc.deadEvery > 0 && n%sc.deadEvery == 0:
		msg.Metadata.Set(streamq.DeadLetterMetadata, "dead at maxmemory") // straight to the DLQ
		msg.Nack()
	case sc.nackFirst && retries == 0:
		msg.Nack()
		return
	default:
		msg.Ack()
	}
	c.mu.Lock()
	c.done[msg.UUID] = true
	c.mu.Unlock()
}

// waitFor waits until every message of uuids is done.
func (c *fullConsumer) waitFor(t *testing.T, uuids []string, who string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		missing := c.missing(uuids)
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d messages never handled", who, missing, len(uuids))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *fullConsumer) missing(uuids []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, u := range uuids {
		if !c.done[u] {
			n++
		}
	}
	return n
}

// assertOnce checks that each message was appended once: every delivery of it as published
// (retries are copies, with a retry count) came from one stream entry.
func (c *fullConsumer) assertOnce(t *testing.T, uuids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var wrong []string
	for _, u := range uuids {
		if n := len(c.first[u]); n != 1 {
			wrong = append(wrong, fmt.Sprintf("%s in %d entries", u, n))
		}
	}
	assert.Empty(t, len(wrong), "messages not appended exactly once, e.g. %s", strings.Join(wrong[:min(len(wrong), 5)], ", "))
}
