package admin_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
)

const bigSize = 80_000 // over the default 64 KiB offload threshold

// bigCounter runs group on topic and records each payload it is handed; dead-letters the
// first delivery of every message when fail.
type bigCounter struct {
	mu  sync.Mutex
	got [][]byte
}

func (c *bigCounter) deliveries() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.got...)
}

func runBigGroup(t *testing.T, client redis.UniversalClient, topic, group string, fail bool) *bigCounter {
	t.Helper()
	sub, err := streamq.NewSubscriber(fastSub(client, group, 1), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	c := &bigCounter{}
	go func() {
		seen := map[string]bool{}
		for m := range ch {
			c.mu.Lock()
			c.got = append(c.got, m.Payload)
			c.mu.Unlock()
			if fail && !seen[m.UUID] {
				seen[m.UUID] = true
				_ = streamq.DeadLetter(m, nil)
				m.Nack()
				continue
			}
			m.Ack()
		}
	}()
	return c
}

// TestReplayOffloadsLargePayloadAgain: a dead letter keeps its payload inline in the DLQ; a
// replay of one over the offload threshold (from admin or from a DLQ handler) stores the
// payload in its own key again, as the publish did, and that key goes once the groups are
// done with the replay; with the threshold off the replay is inline.
func TestReplayOffloadsLargePayloadAgain(t *testing.T) {
	t.Parallel()
	onBackends(t, testReplayOffloadsLargePayloadAgain)
}

func testReplayOffloadsLargePayloadAgain(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	space := keys.New("", "")
	const topic = "replay-big"
	stream, index := space.PartitionStream(topic, 0), space.PayloadIndex(topic, 0)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	require.NoError(t, adm.CreateTopic(ctx, topic, 1))
	a, b := runBigGroup(t, client, topic, "a", true), runBigGroup(t, client, topic, "b", false)

	body := make([]byte, bigSize)
	_, err = rand.Read(body)
	require.NoError(t, err)
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), body)))
	require.Eventually(t, func() bool { return len(b.deliveries()) == 1 && dlqLen(t, client, space.DLQ(topic, 0)) == 1 },
		10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return zcard(t, client, index) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the published payload goes once both groups are done with it")
	letters, err := adm.DLQEntries(ctx, topic, 10)
	require.NoError(t, err)
	require.Len(t, letters, 1)

	// admin's replay
	id, err := adm.ReplayDeadLetter(ctx, topic, 0, letters[0].ID, admin.ReplayOptions{})
	require.NoError(t, err)
	ref := replayedRef(t, client, stream, id) // stored apart: the entry carries no payload inline
	require.Eventually(t, func() bool { return len(a.deliveries()) == 2 }, 10*time.Second, 10*time.Millisecond, "group a got the replay")
	// Only the payload key held the body (group a may have acked it, and the key gone, by now).
	assert.True(t, bytes.Equal(body, a.deliveries()[1]), "group a got the whole payload back from its key")
	require.Eventually(t, func() bool { return zcard(t, client, index) == 0 && !exists(t, client, space.Payload(topic, 0, ref)) },
		10*time.Second, 10*time.Millisecond, "the replay's payload goes once a acked it and b skipped it")
	assert.Len(t, b.deliveries(), 1, "group b, which acked the message, did not get the replay")

	// a DLQ handler's replay
	fixers, err := streamq.NewSubscriber(fastSub(client, "fixers", 1), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fixers.Close() })
	ch, err := fixers.Subscribe(ctx, streamq.DLQTopic(topic))
	require.NoError(t, err)
	letter := <-ch
	assert.True(t, bytes.Equal(body, letter.Payload), "the DLQ handler sees the whole payload")
	streamq.Replay(letter)
	letter.Ack()
	require.Eventually(t, func() bool { return len(a.deliveries()) == 3 }, 10*time.Second, 10*time.Millisecond)
	assert.True(t, bytes.Equal(body, a.deliveries()[2]))
	entries, err := client.XRange(ctx, stream, "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, entries, 3)
	replayedRef(t, client, stream, entries[2].ID)
	require.Eventually(t, func() bool { return zcard(t, client, index) == 0 }, 10*time.Second, 10*time.Millisecond)

	// the threshold off: inline
	inline, err := admin.New(client, admin.Options{Payloads: streamq.PayloadConfig{Threshold: -1}})
	require.NoError(t, err)
	id, err = inline.ReplayDeadLetter(ctx, topic, 0, letters[0].ID, admin.ReplayOptions{Again: true}) // replayed above
	require.NoError(t, err)
	got, err := client.XRange(ctx, stream, id, id).Result()
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.NotContains(t, got[0].Values, payload.FieldRef)
	assert.Equal(t, string(body), got[0].Values["payload"])
}

// replayedRef checks that entry id of stream refers to an offloaded payload of bigSize bytes,
// indexed, and returns its reference.
func replayedRef(t *testing.T, client redis.UniversalClient, stream, id string) string {
	t.Helper()
	got, err := client.XRange(context.Background(), stream, id, id).Result()
	require.NoError(t, err)
	require.Len(t, got, 1)
	v := got[0].Values
	ref, _ := v[payload.FieldRef].(string)
	require.NotEmpty(t, ref, "the replay's payload is stored apart: %v", v[payload.FieldStorageType])
	assert.Equal(t, "", v["payload"], "the replayed entry carries no payload inline")
	assert.Equal(t, strconv.Itoa(bigSize), v[payload.FieldOriginalSize])
	return ref
}

func dlqLen(t *testing.T, client redis.UniversalClient, key string) int64 {
	t.Helper()
	n, err := client.XLen(context.Background(), key).Result()
	require.NoError(t, err)
	return n
}

func zcard(t *testing.T, client redis.UniversalClient, key string) int64 {
	t.Helper()
	n, err := client.ZCard(context.Background(), key).Result()
	require.NoError(t, err)
	return n
}

func exists(t *testing.T, client redis.UniversalClient, key string) bool {
	t.Helper()
	n, err := client.Exists(context.Background(), key).Result()
	require.NoError(t, err)
	return n == 1
}
