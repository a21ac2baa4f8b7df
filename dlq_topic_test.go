package streamq_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// dlqDelivery is one message seen on a topic, with its delivery context.
type dlqDelivery struct {
	uuid, payload, streamID, topic, group string
	partition                             int
	count                                 int64
	metadata                              message.Metadata
}

func seen(m *message.Message) dlqDelivery {
	ctx := m.Context()
	p, _ := streamq.PartitionFromCtx(ctx)
	id, _ := streamq.StreamIDFromCtx(ctx)
	topic, _ := streamq.TopicFromCtx(ctx)
	group, _ := streamq.ConsumerGroupFromCtx(ctx)
	count, _ := streamq.DeliveryCountFromCtx(ctx)
	md := message.Metadata{}
	for k, v := range m.Metadata {
		md[k] = v
	}
	return dlqDelivery{uuid: m.UUID, payload: string(m.Payload), streamID: id, topic: topic, group: group,
		partition: p, count: count, metadata: md}
}

// log collects deliveries from a handler goroutine.
type deliveryLog struct {
	mu   sync.Mutex
	rows []dlqDelivery
}

func (l *deliveryLog) add(d dlqDelivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, d)
}

func (l *deliveryLog) all() []dlqDelivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]dlqDelivery(nil), l.rows...)
}

func (l *deliveryLog) waitLen(t *testing.T, n int, timeout time.Duration) []dlqDelivery {
	t.Helper()
	require.Eventually(t, func() bool { return len(l.all()) >= n }, timeout, 10*time.Millisecond,
		"expected %d deliveries", n)
	return l.all()
}

// dlqLen is the number of dead letters of topic over partitions.
func dlqLen(t *testing.T, client redis.UniversalClient, topic string, partitions int) int64 {
	t.Helper()
	space := keys.New("", "")
	var n int64
	for p := 0; p < partitions; p++ {
		l, err := client.XLen(context.Background(), space.DLQ(topic, p)).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

func waitDLQLen(t *testing.T, client redis.UniversalClient, topic string, partitions int, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return dlqLen(t, client, topic, partitions) == want },
		10*time.Second, 10*time.Millisecond, "DLQ of %q never held %d entries", topic, want)
}

// forced builds a message for partition p.
func forced(payload string, p int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), []byte(payload))
	m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	return m
}

// deadLetterHandler dead-letters every message without x-replayed-from and records (and acks)
// the replays.
func deadLetterHandler(ch <-chan *message.Message, replays *deliveryLog) {
	go func() {
		for m := range ch {
			if m.Metadata.Get(streamq.ReplayedFromMetadata) != "" {
				replays.add(seen(m))
				m.Ack()
				continue
			}
			_ = streamq.DeadLetter(m, errors.New("bad "+string(m.Payload)))
			m.Nack()
		}
	}()
}

// scanKeys lists the keys matching pattern (on every master of a cluster).
func scanKeys(t *testing.T, client redis.UniversalClient, pattern string) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	forEachMaster(t, client, func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	})
	return out
}

func TestDLQTopicDeliversAndReplays(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQTopicDeliversAndReplays)
}

func testDLQTopicDeliversAndReplays(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	space := keys.New("", "")
	const topic, partitions = "orders", 4
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})

	replays := &deliveryLog{}
	_, workCh := streamqtest.SubscribeMember(t, client, topic, "workers", "w1", partitions, nil)
	deadLetterHandler(workCh, replays)

	sent := map[string]*message.Message{}
	died := map[string]int{} // payload -> partition
	for _, p := range []int{0, 2, 3} {
		m := forced("m"+strconv.Itoa(p), p)
		sent[m.UUID] = m
		died[string(m.Payload)] = p
		require.NoError(t, pub.Publish(topic, m))
	}
	waitDLQLen(t, client, topic, partitions, 3)

	// Group "ops" consumes the DLQ as a Watermill topic; it replays m2.
	ops := &deliveryLog{}
	_, opsCh := streamqtest.SubscribeMember(t, client, streamq.DLQTopic(topic), "ops", "o1", partitions, nil)
	go func() {
		for m := range opsCh {
			ops.add(seen(m))
			if string(m.Payload) == "m2" {
				streamq.Replay(m)
			}
			m.Ack()
		}
	}()

	got := ops.waitLen(t, 3, 10*time.Second)
	dlqIDs := map[string]string{} // payload -> DLQ entry id
	for _, d := range got {
		orig, ok := sent[d.uuid]
		require.True(t, ok, "unknown UUID %s delivered on the DLQ topic", d.uuid)
		assert.Equal(t, string(orig.Payload), d.payload)
		assert.Equal(t, died[d.payload], d.partition, "partition of %s", d.payload)
		assert.Equal(t, "bad "+d.payload, d.metadata.Get(streamq.DeadLetterMetadata))
		assert.Equal(t, streamq.DLQTopic(topic), d.topic)
		assert.Equal(t, "ops", d.group)
		assert.Equal(t, int64(1), d.count)
		dlqIDs[d.payload] = d.streamID
		// The delivered id is the DLQ entry's.
		e, err := client.XRange(context.Background(), space.DLQ(topic, d.partition), d.streamID, d.streamID).Result()
		require.NoError(t, err)
		require.Len(t, e, 1)
		assert.Equal(t, d.uuid, e[0].Values[streamq.UUIDField])
	}
	require.Len(t, dlqIDs, 3, "three distinct dead letters")

	// The replay reaches the original group on the original partition.
	rep := replays.waitLen(t, 1, 10*time.Second)[0]
	var m2 *message.Message
	for _, m := range sent {
		if string(m.Payload) == "m2" {
			m2 = m
		}
	}
	assert.Equal(t, m2.UUID, rep.uuid)
	assert.Equal(t, "m2", rep.payload)
	assert.Equal(t, 2, rep.partition)
	assert.Equal(t, topic, rep.topic)
	assert.Equal(t, "workers", rep.group)
	assert.Equal(t, dlqIDs["m2"], rep.metadata.Get(streamq.ReplayedFromMetadata))
	assert.Empty(t, rep.metadata.Get(streamq.DeadLetterMetadata), "the replay is not marked dead")
	assert.Empty(t, rep.metadata.Get(streamq.ReplayMetadata), "the replay request is not carried over")
	assert.Empty(t, rep.metadata.Get(streamq.RetryCountMetadata))

	// The DLQ entry stays; ops acked all three and does not get m2 again.
	assert.Equal(t, int64(3), dlqLen(t, client, topic, partitions))
	require.Eventually(t, func() bool {
		for p := 0; p < partitions; p++ {
			if streamqtest.GroupPending(t, client, space.DLQ(topic, p), "ops") != 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, 10*time.Millisecond, "ops acks of the DLQ entries")
	require.Never(t, func() bool { return len(ops.all()) > 3 }, 500*time.Millisecond, 20*time.Millisecond,
		"no redelivery on the DLQ topic")
	assert.Len(t, ops.all(), 3)
	assert.Len(t, replays.all(), 1, "one replay")
	assert.Equal(t, int64(3), dlqLen(t, client, topic, partitions), "the replay was not dead-lettered again")
}

func TestDLQTopicNackRedelivers(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	space := keys.New("", "")
	const topic, partitions = "nacks", 2
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	_, workCh := streamqtest.SubscribeMember(t, client, topic, "workers", "w1", partitions, nil)
	deadLetterHandler(workCh, &deliveryLog{})
	require.NoError(t, pub.Publish(topic, forced("n1", 1)))
	waitDLQLen(t, client, topic, partitions, 1)

	ops := &deliveryLog{}
	_, opsCh := streamqtest.SubscribeMember(t, client, streamq.DLQTopic(topic), "ops", "o1", partitions, nil)
	go func() {
		n := 0
		for m := range opsCh {
			ops.add(seen(m))
			if n++; n <= 2 {
				m.Nack()
				continue
			}
			m.Ack()
		}
	}()

	require.Eventually(t, func() bool { return len(ops.all()) >= 3 }, 5*time.Second, 10*time.Millisecond,
		"a nacked dead letter is delivered again")
	got := ops.all()
	require.Len(t, got, 3, "two nacks, then the ack: %+v", got)
	for i, d := range got {
		assert.Equal(t, got[0].uuid, d.uuid)
		assert.Equal(t, got[0].streamID, d.streamID, "the same DLQ entry")
		assert.Equal(t, "n1", d.payload)
		assert.Equal(t, 1, d.partition)
		assert.Equal(t, int64(i+1), d.count, "delivery count")
		assert.Equal(t, "bad n1", d.metadata.Get(streamq.DeadLetterMetadata))
	}

	require.Eventually(t, func() bool { return streamqtest.GroupPending(t, client, space.DLQ(topic, 1), "ops") == 0 },
		5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int64(1), dlqLen(t, client, topic, partitions), "nacks on a DLQ topic add no dead letters")
	assert.Empty(t, scanKeys(t, client, "*:dlq:dlq*"), "no DLQ of a DLQ")
	require.Never(t, func() bool { return len(ops.all()) > 3 }, 300*time.Millisecond, 20*time.Millisecond,
		"acked: no further delivery")
}

func TestDLQTopicNamesReserved(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "ops"))

	for _, topic := range []string{"orders:dlq", streamq.DLQTopic("orders"), streamq.DLQTopic(streamq.DLQTopic("orders"))} {
		err := pub.Publish(topic, message.NewMessage(watermill.NewUUID(), []byte("x")))
		assert.ErrorIs(t, err, streamq.ErrInvalidName, "publish to %q", topic)
	}
	_, err := sub.Subscribe(context.Background(), streamq.DLQTopic(streamq.DLQTopic("orders")))
	assert.ErrorIs(t, err, streamq.ErrInvalidName, "a DLQ has no DLQ")
	assert.ErrorIs(t, sub.SubscribeInitialize(streamq.DLQTopic(streamq.DLQTopic("orders"))), streamq.ErrInvalidName)
	_, err = sub.Subscribe(context.Background(), streamq.DLQTopic("bad{name}"))
	assert.ErrorIs(t, err, streamq.ErrInvalidName)
	assert.Empty(t, scanKeys(t, client, "*"), "nothing was written")
}

func TestDLQTopicPoisonEntry(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQTopicPoisonEntry)
}

func testDLQTopicPoisonEntry(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	space := keys.New("", "")
	const topic, partitions = "raw", 2
	ctx := context.Background()

	tests := []struct {
		name        string
		partition   int
		fields      map[string]any
		wantPayload string
	}{
		{"one unknown field", 0, map[string]any{"foo": "bar"}, ""},
		{"metadata not msgpack", 1, map[string]any{streamq.UUIDField: "u-1", streamq.MetadataField: "\xc1", streamq.PayloadField: "hello"}, "hello"},
	}

	workSub, workCh := streamqtest.SubscribeMember(t, client, topic, "workers", "w1", partitions, nil)
	workSeen := &deliveryLog{}
	go func() {
		for m := range workCh {
			workSeen.add(seen(m))
			m.Ack()
		}
	}()
	for _, tt := range tests {
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: space.PartitionStream(topic, tt.partition), Values: tt.fields}).Err())
	}
	waitDLQLen(t, client, topic, partitions, int64(len(tests)))
	assert.Equal(t, int64(len(tests)), workSub.Stats().Malformed)
	assert.Empty(t, workSeen.all(), "poison is never delivered")

	ops := &deliveryLog{}
	_, opsCh := streamqtest.SubscribeMember(t, client, streamq.DLQTopic(topic), "ops", "o1", partitions, nil)
	go func() {
		for m := range opsCh {
			ops.add(seen(m))
			m.Ack()
		}
	}()
	got := ops.waitLen(t, len(tests), 10*time.Second)
	byPartition := map[int]dlqDelivery{}
	for _, d := range got {
		byPartition[d.partition] = d
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The DLQ entry keeps the raw fields, the reason and the original id.
			orig, err := client.XRange(ctx, space.PartitionStream(topic, tt.partition), "-", "+").Result()
			require.NoError(t, err)
			require.Len(t, orig, 1, "the poison entry stays in the partition")
			assert.Equal(t, int64(0), streamqtest.GroupPending(t, client, space.PartitionStream(topic, tt.partition), "workers"),
				"the poison entry is acked")
			entries, err := client.XRange(ctx, space.DLQ(topic, tt.partition), "-", "+").Result()
			require.NoError(t, err)
			require.Len(t, entries, 1)
			v := entries[0].Values
			raw, _ := v[dlq.FieldRaw].(string)
			for k, val := range tt.fields {
				assert.Contains(t, raw, k)
				if s := val.(string); s != "\xc1" {
					assert.Contains(t, raw, s)
				}
			}
			assert.Contains(t, v[dlq.FieldReason], "malformed")
			var headers map[string]string
			require.NoError(t, json.Unmarshal([]byte(v[dlq.FieldHeaders].(string)), &headers))
			assert.Equal(t, map[string]string{streamq.DeadLetterMetadata: v[dlq.FieldReason].(string)}, headers, "headers carry the reason")
			assert.Equal(t, orig[0].ID, v[dlq.FieldOriginalMessageID])
			assert.Equal(t, strconv.Itoa(tt.partition), v[dlq.FieldPartitionID])
			assert.Equal(t, "workers", v[dlq.FieldGroup])

			// On the DLQ topic it is a message with a synthetic UUID.
			d, ok := byPartition[tt.partition]
			require.True(t, ok, "dead letter of partition %d delivered: %+v", tt.partition, got)
			assert.NotEmpty(t, d.uuid)
			assert.NotEqual(t, "u-1", d.uuid)
			assert.Equal(t, tt.wantPayload, d.payload)
			assert.True(t, strings.Contains(d.metadata.Get(streamq.DeadLetterMetadata), "malformed"),
				"reason %q", d.metadata.Get(streamq.DeadLetterMetadata))
			assert.Equal(t, entries[0].ID, d.streamID)
		})
	}
}

// A dead letter that cannot be written (the DLQ key has the wrong type) stays with the
// partition and is delivered again, so it lands in the DLQ once the key is fixed.
func TestDLQTopicWriteFailureRedelivers(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	space := keys.New("", "")
	ctx := context.Background()
	const topic = "unwritable"
	require.NoError(t, client.Set(ctx, space.DLQ(topic, 0), "not a stream", 0).Err())
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	seenLog := &deliveryLog{}
	_, ch := streamqtest.SubscribeMember(t, client, topic, "workers", "w1", 1, nil)
	go func() {
		for m := range ch {
			seenLog.add(seen(m))
			_ = streamq.DeadLetter(m, errors.New("bad"))
			m.Nack()
		}
	}()
	require.NoError(t, pub.Publish(topic, forced("w", 0)))
	// A second delivery only happens because the first dead-letter write failed.
	seenLog.waitLen(t, 2, 10*time.Second)
	require.NoError(t, client.Del(ctx, space.DLQ(topic, 0)).Err())

	waitDLQLen(t, client, topic, 1, 1)
	got := seenLog.all()
	require.GreaterOrEqual(t, len(got), 2)
	assert.Equal(t, got[0].streamID, got[len(got)-1].streamID, "the same entry delivered again")
	assert.Equal(t, int64(0), streamqtest.GroupPending(t, client, space.PartitionStream(topic, 0), "workers"))
}
