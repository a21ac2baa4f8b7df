package publish

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/chaos"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// seqTestMessages makes n messages without a partition key: each goes to the partition of
// its UUID, the same one each time it is published.
func seqTestMessages(n int, label string) []*message.Message {
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("%s-%d", label, i)))
	}
	return msgs
}

// startLossyRedis starts a redis-server reached through a chaos proxy by a client that never
// sends a command again itself (MaxRetries -1): a lost reply is an error of Publish. direct
// reaches the server without the proxy, to read what it holds.
func startLossyRedis(t *testing.T, tune func(*redis.Options)) (proxy *chaos.Proxy, client, direct *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	proxy, err := chaos.Listen(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	opts := &redis.Options{Addr: proxy.Addr(), DisableIdentity: true, MaxRetries: -1}
	if tune != nil {
		tune(opts)
	}
	client = redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return proxy, client, srv.Client(t)
}

// seqPublisher is an engine on client under idem and pipeline, creating topics of partitions,
// that reports its dropped duplicates to dups; it has published one warm-up message to
// topic, so the server check, the topic's registration and the scripts' load are done and a
// Publish sends only its pipeline.
func seqPublisher(t *testing.T, client redis.UniversalClient, topic string, partitions int, idem Idempotency,
	pipeline Pipeline) (*Engine, *testCounters) {
	t.Helper()
	pub, dups := newTestEngine(t, client, func(c *Config) {
		c.DefaultPartitionCount, c.Idempotency = partitions, idem
		if pipeline.Flushers > 0 {
			c.Pipeline.Flushers = pipeline.Flushers
		}
	})
	require.NoError(t, publishAll(pub, topic, message.NewMessage(watermill.NewUUID(), []byte("warm-up"))))
	return pub, dups
}

var (
	byProducer = Idempotency{Window: window}               // the API's default
	byUUID     = Idempotency{Window: window, ByUUID: true} // IdempotencyConfig.ByUUID
	notIdem    = Idempotency{}                             // IdempotencyConfig.Window -1: plain XADD
)

// seqDups is the number of duplicates dups counted over partitions.
func seqDups(dups *testCounters, partitions int) int {
	dups.mu.Lock()
	defer dups.mu.Unlock()
	total := 0
	for p := range partitions {
		total += dups.dups[p]
	}
	return total
}

// assertEntriesPerUUID checks that each message has want entries on the topic, all on one
// partition when samePartition.
func assertEntriesPerUUID(t *testing.T, stored map[string][]storedEntry, msgs []*message.Message, want int, samePartition bool, what string) {
	t.Helper()
	for _, m := range msgs {
		es := stored[m.UUID]
		if !assert.Len(t, es, want, "%s: entries of %s", what, m.UUID) || !samePartition {
			continue
		}
		for _, e := range es {
			assert.Equal(t, es[0].partition, e.partition, "%s: %s stays on its partition", what, m.UUID)
		}
	}
}

// TestDefaultIdempotencyCoversResendsOfFailedPublishesOnly documents the limit of the default
// idempotent publish: a Publish that succeeded forgets its messages' numbers, so the same
// messages published again to the same engine, both times successfully, are appended
// again (a new event that reuses a UUID is not a resend). Idempotency.ByUUID drops any
// publish again of a UUID within the window, for what must be deduplicated by UUID (a relay,
// a restarted producer).
func TestDefaultIdempotencyCoversResendsOfFailedPublishesOnly(t *testing.T) {
	t.Parallel()
	const topic, partitions = "twice", 4
	for _, tc := range []struct {
		name string
		idem Idempotency
		want int
	}{
		{"by producer and sequence (default): appended twice", byProducer, 2},
		{"by UUID: appended once", byUUID, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := redistest.Start(t).Client(t)
			pub, dups := seqPublisher(t, client, topic, partitions, tc.idem, Pipeline{})
			msgs := seqTestMessages(6, "twice")
			require.NoError(t, publishAll(pub, topic, msgs...))
			assert.Zero(t, pub.resends.size.Load(), "a Publish that succeeded remembers no number")
			require.NoError(t, publishAll(pub, topic, msgs...), "the same messages again")
			assertEntriesPerUUID(t, storedByUUID(t, client, topic, partitions), msgs, tc.want, true, tc.name)
			assert.Equal(t, len(msgs)*(2-tc.want), seqDups(dups, partitions), "duplicates dropped")
		})
	}
}

// TestSeqPublishAgainAfterLostReplyAppendsOnce: Redis ran a Publish's pipeline but its reply
// was lost (and go-redis does not send it again: MaxRetries -1), so Publish fails; the caller
// publishes the same messages again to the same engine, after another Publish advanced the
// producers' numbers. Under the default idempotency each message is in its partition exactly
// once, the second Publish returns nil and the resends are counted as duplicates. The
// control: with idempotency off the messages whose reply was lost are appended twice.
func TestSeqPublishAgainAfterLostReplyAppendsOnce(t *testing.T) {
	t.Parallel()
	const topic, partitions = "lost", 4
	for _, tc := range []struct {
		name string
		idem Idempotency
		want int // entries per message
	}{
		{"default", byProducer, 1},
		{"off", notIdem, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proxy, client, direct := startLossyRedis(t, nil)
			pub, dups := seqPublisher(t, client, topic, partitions, tc.idem, Pipeline{})
			msgs := seqTestMessages(8, "lost")

			proxy.LoseReplies(1)
			require.Error(t, publishAll(pub, topic, msgs...), "the pipeline's reply was lost")
			assertEntriesPerUUID(t, storedByUUID(t, direct, topic, partitions), msgs, 1, true,
				"Redis ran the appends before their reply was lost")

			between := seqTestMessages(5, "between")
			require.NoError(t, publishAll(pub, topic, between...), "other messages meanwhile")
			require.NoError(t, publishAll(pub, topic, msgs...), "the caller publishes the same messages again")

			stored := storedByUUID(t, direct, topic, partitions)
			idempotent := tc.idem.on()
			assertEntriesPerUUID(t, stored, msgs, tc.want, true, "the messages sent again")
			assertEntriesPerUUID(t, stored, between, 1, true, "the messages between")
			if idempotent {
				assert.Equal(t, len(msgs), seqDups(dups, partitions), "each resend dropped as a duplicate")
				assert.Zero(t, pub.resends.size.Load(), "the successful resend forgot the numbers")
			} else {
				assert.Zero(t, seqDups(dups, partitions))
			}
		})
	}
}

// TestSeqPublishAgainOfWritesThatNeverArrivedAppendsThem: a Publish whose pipeline never
// reached Redis (the network was cut and the client's read timed out) fails; after other
// messages of the same producer (one flusher) were appended with higher numbers, the same
// messages published again keep their lower numbers and are appended: never a loss.
func TestSeqPublishAgainOfWritesThatNeverArrivedAppendsThem(t *testing.T) {
	t.Parallel()
	const topic, partitions = "cut", 2
	proxy, client, direct := startLossyRedis(t, func(o *redis.Options) { o.ReadTimeout = 500 * time.Millisecond })
	pub, dups := seqPublisher(t, client, topic, partitions, byProducer, Pipeline{Flushers: 1})
	msgs := seqTestMessages(6, "cut")

	proxy.Cut()
	require.Error(t, publishAll(pub, topic, msgs...), "the read timed out")
	proxy.Restore() // drops what the cut held: the pipeline never reaches Redis
	assertEntriesPerUUID(t, storedByUUID(t, direct, topic, partitions), msgs, 0, false, "nothing arrived")
	assert.EqualValues(t, len(msgs), pub.resends.size.Load(), "the failed Publish remembers its numbers")

	between := seqTestMessages(6, "between")
	require.NoError(t, publishAll(pub, topic, between...), "the producer's next numbers")
	require.NoError(t, publishAll(pub, topic, msgs...), "the same messages again, with their first numbers")

	stored := storedByUUID(t, direct, topic, partitions)
	assertEntriesPerUUID(t, stored, msgs, 1, true, "appended by the resend")
	assertEntriesPerUUID(t, stored, between, 1, true, "the messages between")
	assert.Zero(t, seqDups(dups, partitions), "nothing was a duplicate")
}

// publishGivingUp publishes msgs through proxy, slowed to a round trip of at least
// 300ms, with a context that ends after 50ms: Publish returns the context's error while the
// pipeline is on its way. The messages get a context that never ends back, for the resend;
// the proxy stays slow.
func publishGivingUp(t *testing.T, proxy *chaos.Proxy, pub *Engine, topic string, msgs []*message.Message) {
	t.Helper()
	proxy.SetLatency(150 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	for _, m := range msgs {
		m.SetContext(ctx)
	}
	require.ErrorIs(t, publishAll(pub, topic, msgs...), context.DeadlineExceeded)
	for _, m := range msgs {
		m.SetContext(context.Background())
	}
}

// TestSeqPublishAgainAfterCallerGaveUpAppendsOnce: a caller whose context ended while the
// pipeline's reply was on its slow way back gets the context's error; once the pipeline's
// flusher saw it through (it remembers the numbers), the same messages published again with
// a fresh context are dropped: each is in its partition exactly once.
func TestSeqPublishAgainAfterCallerGaveUpAppendsOnce(t *testing.T) {
	t.Parallel()
	const topic, partitions = "gaveup", 4
	proxy, client, direct := startLossyRedis(t, nil)
	pub, dups := seqPublisher(t, client, topic, partitions, byProducer, Pipeline{})
	msgs := seqTestMessages(4, "gaveup")

	publishGivingUp(t, proxy, pub, topic, msgs)
	require.Eventually(t, func() bool {
		return pub.resends.size.Load() == int64(len(msgs)) && pub.resends.pending(topic, msgs) == nil
	}, 5*time.Second, 10*time.Millisecond, "the flusher remembers the numbers once its pipeline is through")
	proxy.SetLatency(0)
	assertEntriesPerUUID(t, storedByUUID(t, direct, topic, partitions), msgs, 1, true, "the first send was appended")

	require.NoError(t, publishAll(pub, topic, msgs...), "the same messages again")
	assertEntriesPerUUID(t, storedByUUID(t, direct, topic, partitions), msgs, 1, true, "after the resend")
	assert.Equal(t, len(msgs), seqDups(dups, partitions), "each resend dropped as a duplicate")
	assert.Zero(t, pub.resends.size.Load())
}

// TestSeqPublishAgainAtOnceAfterCallerGaveUpAppendsOnce: as above, but the caller publishes
// the same messages again as soon as its Publish returned the context's error (a retry loop
// with a timeout per attempt), while the first pipeline's reply is still on its way: each
// message should still be in its partition exactly once.
func TestSeqPublishAgainAtOnceAfterCallerGaveUpAppendsOnce(t *testing.T) {
	t.Parallel()
	const topic, partitions = "retry", 4
	proxy, client, direct := startLossyRedis(t, nil)
	pub, _ := seqPublisher(t, client, topic, partitions, byProducer, Pipeline{})
	msgs := seqTestMessages(4, "retry")

	publishGivingUp(t, proxy, pub, topic, msgs)
	// The first pipeline left before the resend and both take the same way: when the
	// resend's reply is back, Redis ran both.
	require.NoError(t, publishAll(pub, topic, msgs...), "the same messages again, at once")
	assertEntriesPerUUID(t, storedByUUID(t, direct, topic, partitions), msgs, 1, true, "after the resend")
}

// TestSeqProducerKeysExpire: the producer record that holds the numbers appended to a
// topic's partitions (one key per producer for the partitions of a single server's group)
// expires by itself a window after the producer's last append: with a 300ms window it exists
// with a TTL of at most the window, reads each partition's last number, and is gone after it.
func TestSeqProducerKeysExpire(t *testing.T) {
	t.Parallel()
	const topic, partitions, window = "expiring", 2, 300 * time.Millisecond
	client := redistest.Start(t).Client(t)
	ctx := context.Background()
	pub, _ := newTestEngine(t, client, func(c *Config) {
		c.DefaultPartitionCount, c.Idempotency = partitions, Idempotency{Window: window}
	})
	var msgs []*message.Message
	for i := range 6 {
		m := message.NewMessage(watermill.NewUUID(), []byte("x"))
		m.Metadata.Set(codec.HeaderForcePartition, fmt.Sprint(i%partitions))
		msgs = append(msgs, m)
	}
	require.NoError(t, publishAll(pub, topic, msgs...), "one Publish: one flusher, one producer")

	prefix := space.Producers(topic, 0) + ":"
	found, err := client.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	require.Len(t, found, 1, "the record of the producer that appended, for both partitions")
	assert.Regexp(t, regexp.MustCompile(`^[0-9A-Za-z]+-[0-9]+$`), strings.TrimPrefix(found[0], prefix),
		"the producer id: <shortuuid>-<flusher>")
	others, err := client.Keys(ctx, space.Producers(topic, 1)+":*").Result()
	require.NoError(t, err)
	assert.Empty(t, others, "partition 1 is in partition 0's group")
	v, err := client.Get(ctx, found[0]).Result()
	require.NoError(t, err)
	assert.Equal(t, "0:3,1:3", v, "three numbers appended to each partition, no gaps")
	ttl, err := client.PTTL(ctx, found[0]).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0), "the key expires")
	assert.LessOrEqual(t, ttl, window, "within the window")
	require.Eventually(t, func() bool { return client.Exists(ctx, found...).Val() == 0 }, 5*time.Second,
		20*time.Millisecond, "gone once the window has passed")
}
