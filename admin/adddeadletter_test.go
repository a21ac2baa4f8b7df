package admin_test

import (
	"context"
	"strings"
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
)

// receive returns the first message of ch for which want is true, acking every message.
func receive(t *testing.T, ch <-chan *message.Message, what string, want func(*message.Message) bool) *message.Message {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case m := <-ch:
			m.Ack()
			if want(m) {
				return m
			}
		case <-timeout:
			t.Fatalf("%s never delivered", what)
			return nil
		}
	}
}

func subscribe(t *testing.T, client redis.UniversalClient, group, topic string, partitions int) <-chan *message.Message {
	t.Helper()
	sub, err := streamq.NewSubscriber(fastSub(client, group, partitions), watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	return ch
}

// TestAddDeadLetter is acceptance 8: a dead letter written through admin is listed,
// consumable from the DLQ topic and replayable to its partition, on one node and on a cluster.
func TestAddDeadLetter(t *testing.T) {
	t.Parallel()
	onBackends(t, testAddDeadLetter)
}

func testAddDeadLetter(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, partitions = "tools", 4
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, topic, partitions))

	// The tool read a message of partition 2 and rejects it outside any handler.
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	orig := message.NewMessage(watermill.NewUUID(), []byte("order 7"))
	orig.Metadata.Set(streamq.ForcePartitionMetadata, "2")
	require.NoError(t, pub.Publish(topic, orig))
	origID, ok := streamq.PublishedStreamID(orig)
	require.True(t, ok)

	failedAt := time.UnixMilli(time.Now().Add(-time.Minute).UnixMilli())
	added, err := adm.AddDeadLetter(ctx, admin.NewDeadLetter{
		Topic: topic, Partition: 2, UUID: orig.UUID, Payload: orig.Payload,
		Metadata: map[string]string{"customer": "c-7", streamq.PublishedStreamIDMetadata: origID}, // as orig carries it
		Reason:   "rejected by the reconciler", Group: "workers", OriginalMessageID: origID,
		RetryCount: 1, MaxRetries: 3, FailedAt: failedAt,
	})
	require.NoError(t, err)
	require.NotEmpty(t, added.ID)

	// Listed, with every field as written.
	all, err := adm.DLQEntries(ctx, topic, 0)
	require.NoError(t, err)
	require.Len(t, all, 1)
	got := all[0]
	assert.Equal(t, added, got, "AddDeadLetter returns the letter as DLQEntries reads it")
	assert.Equal(t, topic, got.Topic)
	assert.Equal(t, 2, got.Partition)
	assert.Equal(t, orig.UUID, got.UUID)
	assert.Equal(t, []byte("order 7"), got.Payload)
	assert.Equal(t, "c-7", got.Metadata["customer"])
	assert.NotContains(t, got.Metadata, streamq.PublishedStreamIDMetadata, "a Publish's result is not stored")
	assert.Equal(t, "rejected by the reconciler", got.Metadata[streamq.DeadLetterMetadata])
	assert.Equal(t, origID, got.Metadata[streamq.OriginalIDMetadata])
	assert.Equal(t, "rejected by the reconciler", got.Reason)
	assert.Equal(t, "workers", got.Group)
	assert.Equal(t, 1, got.RetryCount)
	assert.Equal(t, 3, got.MaxRetries)
	assert.Equal(t, origID, got.OriginalMessageID)
	assert.Equal(t, origID, got.OriginalStreamID, "the failed delivery defaults to the original")
	assert.True(t, failedAt.Equal(got.FailedAt), "failed at %s, want %s", got.FailedAt, failedAt)
	assert.False(t, got.Timestamp.IsZero())
	assert.Empty(t, got.Raw)
	one, err := adm.DLQEntry(ctx, topic, 2, added.ID)
	require.NoError(t, err)
	assert.Equal(t, got, one)
	size, err := adm.DLQSize(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(1), size)

	// Consumed from the DLQ topic.
	dead := receive(t, subscribe(t, client, "ops", streamq.DLQTopic(topic), partitions), "the dead letter on the DLQ topic",
		func(*message.Message) bool { return true })
	assert.Equal(t, orig.UUID, dead.UUID)
	assert.Equal(t, "order 7", string(dead.Payload))
	assert.Equal(t, "c-7", dead.Metadata.Get("customer"))
	assert.Equal(t, "rejected by the reconciler", dead.Metadata.Get(streamq.DeadLetterMetadata))
	p, _ := streamq.PartitionFromCtx(dead.Context())
	assert.Equal(t, 2, p)
	id, _ := streamq.StreamIDFromCtx(dead.Context())
	assert.Equal(t, added.ID, id)
	dlqTopic, _ := streamq.TopicFromCtx(dead.Context())
	assert.Equal(t, streamq.DLQTopic(topic), dlqTopic)

	// Replayed to its partition, where the group that rejected it receives it.
	workers := subscribe(t, client, "workers", topic, partitions)
	receive(t, workers, "the original message", func(m *message.Message) bool { return m.UUID == orig.UUID })
	newID, err := adm.ReplayDeadLetter(ctx, topic, 2, added.ID, admin.ReplayOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, newID)
	replay := receive(t, workers, "the replay", func(m *message.Message) bool {
		return m.Metadata.Get(streamq.ReplayedFromMetadata) != ""
	})
	assert.Equal(t, orig.UUID, replay.UUID)
	assert.Equal(t, "order 7", string(replay.Payload))
	assert.Equal(t, added.ID, replay.Metadata.Get(streamq.ReplayedFromMetadata))
	assert.Equal(t, "c-7", replay.Metadata.Get("customer"))
	assert.Empty(t, replay.Metadata.Get(streamq.DeadLetterMetadata))
	p, _ = streamq.PartitionFromCtx(replay.Context())
	assert.Equal(t, 2, p)
	original, _ := streamq.OriginalIDFromCtx(replay.Context())
	assert.Equal(t, origID, original)
}

// The defaults: a new UUID, the server's time, no group, no original ids.
func TestAddDeadLetterDefaults(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t)
	e.create("bare", 2)
	before := time.Now().Add(-time.Second)
	d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "bare", Partition: 1, Reason: "no"})
	require.NoError(t, err)
	assert.NotEmpty(t, d.UUID)
	assert.Empty(t, d.Payload)
	assert.Empty(t, d.Group)
	assert.Empty(t, d.OriginalMessageID)
	assert.Empty(t, d.OriginalStreamID)
	assert.Equal(t, map[string]string{streamq.DeadLetterMetadata: "no"}, d.Metadata)
	assert.True(t, d.FailedAt.After(before) && d.FailedAt.Before(time.Now().Add(time.Second)), "failed at %s", d.FailedAt)
	assert.True(t, d.Timestamp.Equal(d.FailedAt), "a letter that never was in the partition: timestamp = failure time")
	got, err := e.adm.DLQEntry(e.ctx, "bare", 1, d.ID)
	require.NoError(t, err)
	assert.Equal(t, d, got)
	raw, err := e.client.XRange(e.ctx, keys.New("", "").DLQ("bare", 1), d.ID, d.ID).Result()
	require.NoError(t, err)
	require.Len(t, raw, 1)
	assert.Equal(t, "bare", raw[0].Values["originalTopic"])
	assert.Equal(t, "1", raw[0].Values["partitionId"])
}

func TestAddDeadLetterRejectsBadInput(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t)
	e.create("known", 3)
	ok := admin.NewDeadLetter{Topic: "known", Partition: 2, Reason: "r"}
	tests := []struct {
		name string
		edit func(*admin.NewDeadLetter)
		want error
	}{
		{"unknown topic", func(l *admin.NewDeadLetter) { l.Topic = "nope" }, admin.ErrTopicNotFound},
		{"DLQ topic name", func(l *admin.NewDeadLetter) { l.Topic = streamq.DLQTopic("known") }, admin.ErrTopicNotFound},
		{"empty topic", func(l *admin.NewDeadLetter) { l.Topic = "" }, admin.ErrInvalidArgument},
		{"bad topic name", func(l *admin.NewDeadLetter) { l.Topic = "a{b}" }, admin.ErrInvalidArgument},
		{"partition too high", func(l *admin.NewDeadLetter) { l.Partition = 3 }, admin.ErrInvalidArgument},
		{"negative partition", func(l *admin.NewDeadLetter) { l.Partition = -1 }, admin.ErrInvalidArgument},
		{"no reason", func(l *admin.NewDeadLetter) { l.Reason = "" }, admin.ErrInvalidArgument},
		{"bad group", func(l *admin.NewDeadLetter) { l.Group = "a b" }, admin.ErrInvalidArgument},
		{"bad original id", func(l *admin.NewDeadLetter) { l.OriginalMessageID = "nope" }, admin.ErrInvalidArgument},
		{"bad failed stream id", func(l *admin.NewDeadLetter) { l.OriginalStreamID = "1-x" }, admin.ErrInvalidArgument},
		{"negative retry count", func(l *admin.NewDeadLetter) { l.RetryCount = -1 }, admin.ErrInvalidArgument},
		{"reserved metadata", func(l *admin.NewDeadLetter) {
			l.Metadata = map[string]string{streamq.UUIDField: "x"}
		}, admin.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ok
			tt.edit(&l)
			_, err := e.adm.AddDeadLetter(e.ctx, l)
			require.ErrorIs(t, err, tt.want)
			assert.False(t, strings.HasPrefix(err.Error(), ": "))
		})
	}
	n, err := e.adm.DLQSize(e.ctx, "known")
	require.NoError(t, err)
	assert.Zero(t, n, "no rejected call wrote a dead letter")
	_, err = e.adm.AddDeadLetter(e.ctx, ok)
	require.NoError(t, err)
}
