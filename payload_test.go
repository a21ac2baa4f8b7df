package streamq_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// Helpers shared by payload_test.go, delivery_acks_test.go and retention_test.go.

const bigPayloadSize = 80_000 // above the default 64 KiB offload threshold

// randomPayload returns n random bytes that certainly contain NUL bytes.
func randomPayload(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	for i := 0; i < n; i += 997 {
		b[i] = 0
	}
	return b
}

// nextMsg returns the next message of ch, failing the test after timeout.
func nextMsg(t testing.TB, ch <-chan *message.Message, timeout time.Duration) *message.Message {
	t.Helper()
	select {
	case m, ok := <-ch:
		require.True(t, ok, "subscription channel closed")
		return m
	case <-time.After(timeout):
		t.Fatalf("no message within %s", timeout)
		return nil
	}
}

// streamEntries reads every entry of a stream.
func streamEntries(t testing.TB, client redis.UniversalClient, stream string) []redis.XMessage {
	t.Helper()
	msgs, err := client.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	return msgs
}

// onlyEntry reads the single entry of a stream.
func onlyEntry(t testing.TB, client redis.UniversalClient, stream string) redis.XMessage {
	t.Helper()
	msgs := streamEntries(t, client, stream)
	require.Len(t, msgs, 1, "stream %s", stream)
	return msgs[0]
}

func keyExists(t testing.TB, client redis.UniversalClient, key string) bool {
	t.Helper()
	n, err := client.Exists(context.Background(), key).Result()
	require.NoError(t, err)
	return n == 1
}

// indexed reports whether member is in the zset index.
func indexed(t testing.TB, client redis.UniversalClient, index, member string) bool {
	t.Helper()
	_, err := client.ZScore(context.Background(), index, member).Result()
	if errors.Is(err, redis.Nil) {
		return false
	}
	require.NoError(t, err)
	return true
}

// commitOf is the commit frontier of group on partition p ("" when none).
func commitOf(t testing.TB, client redis.UniversalClient, topic string, p int, group string) string {
	t.Helper()
	v, err := client.HGet(context.Background(), keys.New("", "").Commit(topic, p), group).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return v
}

// waitCommit waits until group's commit frontier on partition p is id: the ack script that
// moves it also applied the ack-delete policy and the payload bookkeeping, atomically.
func waitCommit(t testing.TB, client redis.UniversalClient, topic string, p int, group, id string) {
	t.Helper()
	require.Eventually(t, func() bool { return commitOf(t, client, topic, p, group) == id },
		10*time.Second, 10*time.Millisecond, "commit frontier of %s on %s/%d never reached %s", group, topic, p, id)
}

// entryMetadata decodes the msgpack metadata field of a stream or DLQ entry.
func entryMetadata(t testing.TB, m redis.XMessage) map[string]string {
	t.Helper()
	raw, _ := m.Values[streamq.MetadataField].(string)
	md := map[string]string{}
	if raw != "" {
		require.NoError(t, msgpack.Unmarshal([]byte(raw), &md))
	}
	return md
}

func bigMessage(t testing.TB) *message.Message {
	return message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))
}

// offloadedRef checks that entry points at an offloaded payload of size bytes and returns
// its reference.
func offloadedRef(t testing.TB, entry redis.XMessage, size int) string {
	t.Helper()
	ref, _ := entry.Values[payload.FieldRef].(string)
	require.NotEmpty(t, ref, "entry has no %s: %v", payload.FieldRef, entry.Values)
	assert.Equal(t, payload.StorageString, entry.Values[payload.FieldStorageType])
	assert.Equal(t, strconv.Itoa(size), entry.Values[payload.FieldOriginalSize])
	assert.Equal(t, "", entry.Values[streamq.PayloadField], "the entry's payload field must be empty")
	return ref
}

func TestPayloadOffloadedAndDeletedAfterAck(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPayloadOffloadedAndDeletedAfterAck)
}

func testPayloadOffloadedAndDeletedAfterAck(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "big"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g1"))
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)

	sent := bigMessage(t)
	sent.Metadata.Set("k", "v")
	require.NoError(t, pub.Publish(topic, sent))

	entry := onlyEntry(t, client, space.PartitionStream(topic, 0))
	ref := offloadedRef(t, entry, bigPayloadSize)
	payloadKey := space.Payload(topic, 0, ref)
	index, member := space.PayloadIndex(topic, 0), entry.ID+"|"+ref
	stored, err := client.Get(ctx, payloadKey).Bytes()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(sent.Payload, stored), "stored payload differs")
	ttl, err := client.PTTL(ctx, payloadKey).Result()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-1), ttl, "no Retention: the payload key has no TTL")

	got := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, sent.UUID, got.UUID)
	assert.Equal(t, "v", got.Metadata.Get("k"))
	assert.Len(t, got.Payload, bigPayloadSize)
	assert.True(t, bytes.Equal(sent.Payload, got.Payload), "handled payload differs from the published one")
	for _, f := range []string{payload.FieldRef, payload.FieldStorageType, payload.FieldOriginalSize} {
		assert.Empty(t, got.Metadata.Get(f), "reference field %s leaked into the metadata", f)
	}
	// Before the ack: payload and index member are there.
	assert.True(t, keyExists(t, client, payloadKey), "payload key gone before the ack")
	assert.True(t, indexed(t, client, index, member), "index member gone before the ack")

	got.Ack()
	waitCommit(t, client, topic, 0, "g1", entry.ID)
	assert.False(t, keyExists(t, client, payloadKey), "payload key kept after the only group acked")
	assert.False(t, indexed(t, client, index, member), "index member kept after the only group acked")
	assert.False(t, keyExists(t, client, space.Acks(topic, 0, entry.ID)), "ack set kept after every group acked")
	assert.Equal(t, int64(1), streamqtest.XLen(t, client, space.PartitionStream(topic, 0)), "AckDeleteNone keeps the entry")
}

func TestPayloadKeptUntilEveryGroupAcked(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPayloadKeptUntilEveryGroupAcked)
}

func testPayloadKeptUntilEveryGroupAcked(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "big-two-groups"
	g2 := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g2"))
	require.NoError(t, g2.SubscribeInitialize(topic)) // the group exists, nobody consumes yet
	g1 := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g1"))
	ch1, err := g1.Subscribe(ctx, topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})

	sent := bigMessage(t)
	require.NoError(t, pub.Publish(topic, sent))
	entry := onlyEntry(t, client, space.PartitionStream(topic, 0))
	ref := offloadedRef(t, entry, bigPayloadSize)
	payloadKey, index, member := space.Payload(topic, 0, ref), space.PayloadIndex(topic, 0), entry.ID+"|"+ref

	got := nextMsg(t, ch1, 10*time.Second)
	require.True(t, bytes.Equal(sent.Payload, got.Payload))
	got.Ack()
	waitCommit(t, client, topic, 0, "g1", entry.ID)
	assert.True(t, keyExists(t, client, payloadKey), "payload deleted although g2 has not acked")
	assert.True(t, indexed(t, client, index, member), "index member deleted although g2 has not acked")
	acked, err := client.SMembers(ctx, space.Acks(topic, 0, entry.ID)).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"g1"}, acked)

	ch2, err := g2.Subscribe(ctx, topic)
	require.NoError(t, err)
	got2 := nextMsg(t, ch2, 10*time.Second)
	assert.True(t, bytes.Equal(sent.Payload, got2.Payload), "g2 got a different payload")
	got2.Ack()
	waitCommit(t, client, topic, 0, "g2", entry.ID)
	assert.False(t, keyExists(t, client, payloadKey), "payload kept after both groups acked")
	assert.False(t, indexed(t, client, index, member), "index member kept after both groups acked")
	assert.False(t, keyExists(t, client, space.Acks(topic, 0, entry.ID)), "ack set kept after both groups acked")
}

func TestPayloadThreshold(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPayloadThreshold)
}

func testPayloadThreshold(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	cases := []struct {
		name      string
		threshold int
		size      int
		offloaded bool
	}{
		{"small", 0, 1000, false},
		{"at default threshold", 0, streamq.DefaultPayloadThreshold, false},
		{"above default threshold", 0, streamq.DefaultPayloadThreshold + 1, true},
		{"disabled", -1, bigPayloadSize, false},
		{"custom threshold", 500, 1000, true},
	}
	for i, tc := range cases {
		topic := "threshold-" + strconv.Itoa(i)
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Payloads: streamq.PayloadConfig{Threshold: tc.threshold}})
		sent := message.NewMessage(watermill.NewUUID(), randomPayload(t, tc.size))
		require.NoError(t, pub.Publish(topic, sent), tc.name)
		entry := onlyEntry(t, client, space.PartitionStream(topic, 0))
		if tc.offloaded {
			ref := offloadedRef(t, entry, tc.size)
			assert.True(t, keyExists(t, client, space.Payload(topic, 0, ref)), tc.name)
		} else {
			assert.NotContains(t, entry.Values, payload.FieldRef, tc.name)
			assert.NotContains(t, entry.Values, payload.FieldOriginalSize, tc.name)
			assert.True(t, bytes.Equal(sent.Payload, []byte(entry.Values[streamq.PayloadField].(string))), "%s: inline payload differs", tc.name)
			assert.False(t, keyExists(t, client, space.PayloadIndex(topic, 0)), "%s: nothing indexed", tc.name)
		}
		sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
		ch, err := sub.Subscribe(ctx, topic)
		require.NoError(t, err)
		got := nextMsg(t, ch, 10*time.Second)
		assert.True(t, bytes.Equal(sent.Payload, got.Payload), "%s: handled payload differs", tc.name)
		got.Ack()
		require.NoError(t, sub.Close())
	}
}

func TestPayloadRetentionSetsTTL(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPayloadRetentionSetsTTL)
}

func testPayloadRetentionSetsTTL(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "big-ttl"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Payloads: streamq.PayloadConfig{TTL: 2 * time.Second}})
	require.NoError(t, pub.Publish(topic, bigMessage(t)))
	ref := offloadedRef(t, onlyEntry(t, client, space.PartitionStream(topic, 0)), bigPayloadSize)
	ttl, err := client.PTTL(ctx, space.Payload(topic, 0, ref)).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0))
	assert.LessOrEqual(t, ttl, 2*time.Second)
}

func TestPayloadMissingGoesToDLQ(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPayloadMissingGoesToDLQ)
}

func testPayloadMissingGoesToDLQ(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	space := keys.New("", "")
	topic := "big-missing"
	stream := space.PartitionStream(topic, 0)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	lost := bigMessage(t)
	require.NoError(t, pub.Publish(topic, lost))
	entry := onlyEntry(t, client, stream)
	ref := offloadedRef(t, entry, bigPayloadSize)
	require.NoError(t, client.Del(ctx, space.Payload(topic, 0, ref)).Err())

	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g1"))
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	later := message.NewMessage(watermill.NewUUID(), []byte("later"))
	require.NoError(t, pub.Publish(topic, later))

	got := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, later.UUID, got.UUID, "the handler must never see the entry whose payload is gone")
	got.Ack()

	require.Eventually(t, func() bool { return streamqtest.XLen(t, client, space.DLQ(topic, 0)) == 1 },
		10*time.Second, 10*time.Millisecond)
	dead := onlyEntry(t, client, space.DLQ(topic, 0))
	md := entryMetadata(t, dead)
	assert.Equal(t, "true", md[streamq.PayloadMissingMetadata])
	assert.Equal(t, ref, md[streamq.PayloadMissingRefMetadata])
	assert.Equal(t, lost.UUID, dead.Values[streamq.UUIDField])
	assert.Equal(t, entry.ID, dead.Values[dlq.FieldOriginalStreamID])
	assert.Contains(t, dead.Values[dlq.FieldReason], "payload missing")
	var headers map[string]string
	require.NoError(t, json.Unmarshal([]byte(dead.Values[dlq.FieldHeaders].(string)), &headers))
	assert.Equal(t, "true", headers[streamq.PayloadMissingMetadata], "headers carry the flags")
	assert.Equal(t, ref, headers[streamq.PayloadMissingRefMetadata])
	assert.Equal(t, dead.Values[dlq.FieldReason], headers[streamq.DeadLetterMetadata])

	require.Eventually(t, func() bool { return streamqtest.GroupPending(t, client, stream, "g1") == 0 },
		10*time.Second, 10*time.Millisecond, "the original entry and the later one must be acked")
	assert.Equal(t, int64(1), sub.Stats().PayloadMissing)
	assert.Equal(t, int64(1), sub.Stats().DeadLettered)
	select {
	case m, ok := <-ch:
		if ok {
			t.Fatalf("unexpected delivery %s (%q)", m.UUID, m.Payload)
		}
		t.Fatal("the subscription closed")
	default:
	}
}
