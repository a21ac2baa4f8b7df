package streamq_test

import (
	"context"
	"strconv"
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
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// storedEntry is one entry of a partition as XRANGE lists it, decoded.
type storedEntry struct {
	partition int
	id        string
	metadata  map[string]string
}

// storedByUUID reads every partition of topic with XRANGE: each message's entries by UUID,
// in the order they were appended.
func storedByUUID(t *testing.T, client redis.UniversalClient, topic string, partitions int) map[string][]storedEntry {
	t.Helper()
	space := keys.New("", "")
	out := map[string][]storedEntry{}
	for p := 0; p < partitions; p++ {
		es, err := client.XRange(context.Background(), space.PartitionStream(topic, p), "-", "+").Result()
		require.NoError(t, err)
		for _, e := range es {
			uuid, md, _, err := codec.Decode(e.Values)
			if err != nil { // an offloaded entry: its UUID and metadata decode without the payload
				uuid, _ = e.Values[codec.UUIDField].(string)
				md = map[string]string{}
				require.NoError(t, codec.MetadataInto(e.Values, uuid, md))
			}
			out[uuid] = append(out[uuid], storedEntry{partition: p, id: e.ID, metadata: md})
		}
	}
	return out
}

// assertPublishedAt checks each message's results against the entry XRANGE lists for it: the
// n-th time it was published is its n-th entry, and no entry carries the results.
func assertPublishedAt(t *testing.T, stored map[string][]storedEntry, msgs []*message.Message, nth int) {
	t.Helper()
	for _, m := range msgs {
		es := stored[m.UUID]
		require.Greater(t, len(es), nth, "message %s has %d entries", m.UUID, len(es))
		p, ok := streamq.PublishedPartition(m)
		require.True(t, ok, "partition of %s", m.UUID)
		id, ok := streamq.PublishedStreamID(m)
		require.True(t, ok, "stream id of %s", m.UUID)
		assert.Equal(t, es[nth].partition, p, "partition of %s", m.UUID)
		assert.Equal(t, es[nth].id, id, "stream id of %s", m.UUID)
		for _, e := range es {
			assert.NotContains(t, e.metadata, streamq.PublishedPartitionMetadata, "stored entry %s", e.id)
			assert.NotContains(t, e.metadata, streamq.PublishedStreamIDMetadata, "stored entry %s", e.id)
		}
	}
}

// TestPublishReportsPartitionAndStreamID is acceptance 7: the caller of one Publish of several
// messages over several partitions gets each message's partition and stream id, as XRANGE of
// each partition lists them; a republish of the same messages is a duplicate that reports
// the first ids (with the idempotent append off, it and a copy get the new ids and store none
// of the old ones); concurrent Publish calls coalesced into pipelines each
// get their own; an offloaded message gets its entry's id, a delayed one its partition only.
func TestPublishReportsPartitionAndStreamID(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testPublishReportsPartitionAndStreamID)
}

func testPublishReportsPartitionAndStreamID(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const topic, partitions = "where", 6
	// By UUID: publishing a message again after its Publish succeeded is a duplicate (the
	// default, by producer and sequence, drops only what a failed Publish sent).
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions, Payloads: streamq.PayloadConfig{Threshold: 64},
		Idempotency: streamq.IdempotencyConfig{ByUUID: true}})

	var msgs []*message.Message
	for i := 0; i < 18; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte("m"+strconv.Itoa(i)))
		m.Metadata.Set(streamq.PartitionKeyMetadata, "key-"+strconv.Itoa(i))
		msgs = append(msgs, m)
	}
	msgs[3].Metadata.Set(streamq.ForcePartitionMetadata, "5")
	msgs[7].Payload = make([]byte, 100) // offloaded
	require.NoError(t, pub.Publish(topic, msgs...))
	stored := storedByUUID(t, client, topic, partitions)
	assertPublishedAt(t, stored, msgs, 0)
	used := map[int]bool{}
	for _, m := range msgs {
		p, _ := streamq.PublishedPartition(m)
		used[p] = true
	}
	assert.Greater(t, len(used), 2, "the messages went to several partitions")
	p3, _ := streamq.PublishedPartition(msgs[3])
	assert.Equal(t, 5, p3, "the forced partition")

	// The same message objects published again: the idempotent append by UUID appends
	// nothing and reports the first append; with it off, the new ids, the old ones not stored.
	first, _ := streamq.PublishedStreamID(msgs[0])
	require.NoError(t, pub.Publish(topic, msgs...))
	assertPublishedAt(t, storedByUUID(t, client, topic, partitions), msgs, 0)
	again, _ := streamq.PublishedStreamID(msgs[0])
	assert.Equal(t, first, again, "a duplicate reports the first append")
	plain := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, Payloads: streamq.PayloadConfig{Threshold: 64}, Idempotency: streamq.IdempotencyConfig{Window: -1}})
	require.NoError(t, plain.Publish(topic, msgs...))
	assertPublishedAt(t, storedByUUID(t, client, topic, partitions), msgs, 1)
	again, _ = streamq.PublishedStreamID(msgs[0])
	assert.NotEqual(t, first, again)

	// A copy carries the results; published, it stores none of them and gets its own.
	cp := msgs[1].Copy()
	require.Equal(t, msgs[1].Metadata.Get(streamq.PublishedStreamIDMetadata), cp.Metadata.Get(streamq.PublishedStreamIDMetadata))
	require.NoError(t, plain.Publish(topic, cp))
	assertPublishedAt(t, storedByUUID(t, client, topic, partitions), []*message.Message{cp}, 2)

	// Concurrent calls share pipelines; each gets its own messages' ids.
	var wg sync.WaitGroup
	batches := make([][]*message.Message, 8)
	for b := range batches {
		for i := 0; i < 5; i++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("c"))
			m.Metadata.Set(streamq.PartitionKeyMetadata, strconv.Itoa(b*5+i))
			batches[b] = append(batches[b], m)
		}
		wg.Add(1)
		go func(ms []*message.Message) {
			defer wg.Done()
			assert.NoError(t, pub.Publish(topic, ms...))
		}(batches[b])
	}
	wg.Wait()
	stored = storedByUUID(t, client, topic, partitions)
	for _, ms := range batches {
		assertPublishedAt(t, stored, ms, 0)
	}

	// A delayed message is parked: its partition, no stream id yet.
	later := message.NewMessage(watermill.NewUUID(), []byte("later"))
	later.Metadata.Set(streamq.ForcePartitionMetadata, "2")
	later.Metadata.Set(streamq.PublishedStreamIDMetadata, "1-1") // stale: cleared by Publish
	delay.Message(later, delay.For(time.Hour))
	require.NoError(t, pub.Publish(topic, later))
	p, ok := streamq.PublishedPartition(later)
	assert.True(t, ok)
	assert.Equal(t, 2, p)
	_, ok = streamq.PublishedStreamID(later)
	assert.False(t, ok, "a parked message has no entry yet")
	assert.Empty(t, storedByUUID(t, client, topic, partitions)[later.UUID])

	// A failed Publish leaves no results, not even a previous call's.
	bad := msgs[0]
	bad.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(partitions))
	require.ErrorIs(t, pub.Publish(topic, bad), streamq.ErrPartitionOutOfRange)
	_, ok = streamq.PublishedPartition(bad)
	assert.False(t, ok)
	_, ok = streamq.PublishedStreamID(bad)
	assert.False(t, ok)
}

// Under MinReplicas an unmet WAIT is an error, but the entries are on the master: each
// message still says where it is.
func TestPublishReportsStreamIDWhenNotReplicated(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic, partitions = "unreplicated", 3
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions,
		Replication: streamq.ReplicationConfig{MinReplicas: 1, Timeout: 20 * time.Millisecond}})
	msgs := []*message.Message{forced("a", 0), forced("b", 1), forced("c", 2)}
	require.ErrorIs(t, pub.Publish(topic, msgs...), streamq.ErrNotReplicated)
	assertPublishedAt(t, storedByUUID(t, client, topic, partitions), msgs, 0)
}

func TestPublishedGettersWithoutPublish(t *testing.T) {
	t.Parallel()
	m := message.NewMessage(watermill.NewUUID(), nil)
	_, ok := streamq.PublishedPartition(m)
	assert.False(t, ok)
	_, ok = streamq.PublishedStreamID(m)
	assert.False(t, ok)
	m.Metadata.Set(streamq.PublishedPartitionMetadata, "-1")
	_, ok = streamq.PublishedPartition(m)
	assert.False(t, ok)
}

// A handler that publishes the message it received (so the message carries the results)
// and then nacks or dead-letters it: neither the retry nor the dead letter (its metadata and
// headers) stores the results.
func TestPublishResultsNotStoredByRetriesAndDeadLetters(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic, partitions = "relay", 2
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	_, ch := streamqtest.SubscribeMember(t, client, topic, "relays", "r1", partitions, nil)
	retried := make(chan message.Metadata, 1)
	go func() {
		for m := range ch {
			assert.NoError(t, pub.Publish("elsewhere", m))
			_, ok := streamq.PublishedStreamID(m)
			assert.True(t, ok)
			if n, _ := streamq.RetryCountFromCtx(m.Context()); n > 0 {
				md := message.Metadata{}
				for k, v := range m.Metadata {
					md[k] = v
				}
				retried <- md
				_ = streamq.DeadLetter(m, assert.AnError)
			}
			m.Nack()
		}
	}()
	require.NoError(t, pub.Publish(topic, forced("relayed", 1)))
	waitDLQLen(t, client, topic, partitions, 1)
	stored := storedByUUID(t, client, topic, partitions)
	require.Len(t, stored, 1)
	for _, es := range stored {
		require.Len(t, es, 2, "the message and its retry")
		for _, e := range es {
			assert.NotContains(t, e.metadata, streamq.PublishedPartitionMetadata)
			assert.NotContains(t, e.metadata, streamq.PublishedStreamIDMetadata)
		}
	}
	select {
	case md := <-retried:
		assert.Equal(t, "1", md.Get(streamq.RetryCountMetadata))
	case <-time.After(10 * time.Second):
		t.Fatal("no retry delivered")
	}
	es, err := client.XRange(context.Background(), keys.New("", "").DLQ(topic, 1), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, es, 1)
	letter := dlq.Decode(es[0].Values)
	assert.NotContains(t, letter.Metadata, streamq.PublishedPartitionMetadata)
	assert.NotContains(t, letter.Metadata, streamq.PublishedStreamIDMetadata)
	assert.NotContains(t, letter.Headers, streamq.PublishedPartitionMetadata)
	assert.NotContains(t, letter.Headers, streamq.PublishedStreamIDMetadata)
}

// The entry format never holds the results, whoever encodes it.
func TestDefaultMarshalerLeavesOutPublishResults(t *testing.T) {
	t.Parallel()
	m := message.NewMessage(watermill.NewUUID(), []byte("x"))
	m.Metadata.Set("k", "v")
	m.Metadata.Set(streamq.PublishedPartitionMetadata, "1")
	m.Metadata.Set(streamq.PublishedStreamIDMetadata, "1-1")
	fields, err := streamq.DefaultMarshaler{}.Marshal("t", m)
	require.NoError(t, err)
	values := map[string]any{}
	for k, v := range fields {
		switch v := v.(type) {
		case []byte:
			values[k] = string(v)
		default:
			values[k] = v
		}
	}
	back, err := streamq.DefaultMarshaler{}.Unmarshal(values)
	require.NoError(t, err)
	assert.Equal(t, message.Metadata{"k": "v"}, back.Metadata)
	assert.Equal(t, "1-1", m.Metadata.Get(streamq.PublishedStreamIDMetadata), "the caller's message keeps them")
}
