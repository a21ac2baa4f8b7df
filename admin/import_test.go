package admin_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/redisstreamtest"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// receiveImported consumes n messages of topic as a streamq group, acking each, in delivery order.
func receiveImported(t *testing.T, client redis.UniversalClient, topic, group string, partitions, n int) []*message.Message {
	t.Helper()
	sub, err := streamq.NewSubscriber(fastSub(client, group, partitions), watermill.NopLogger{})
	require.NoError(t, err)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	got := make([]*message.Message, 0, n)
	for len(got) < n {
		select {
		case m := <-ch:
			got = append(got, m)
			m.Ack()
		case <-ctx.Done():
			t.Fatalf("streamq delivered %d of %d messages", len(got), n)
		}
	}
	return got
}

// requireReceivedOnce checks that got are exactly want, each once, each key's in the order
// they were published, with UUID, metadata and payload as published.
func requireReceivedOnce(t *testing.T, want []redisstreamtest.Message, got []*message.Message) {
	t.Helper()
	byUUID := map[string]redisstreamtest.Message{}
	for _, m := range want {
		byUUID[m.UUID] = m
	}
	seen := map[string]bool{}
	lastSeq := map[string]int{}
	for _, m := range got {
		w, ok := byUUID[m.UUID]
		require.True(t, ok, "message %s (seq %s) was acked by the old group, or never published", m.UUID, m.Metadata.Get("seq"))
		require.False(t, seen[m.UUID], "message %s delivered twice", m.UUID)
		seen[m.UUID] = true
		assert.Equal(t, message.Metadata(w.Metadata), m.Metadata, "metadata of %s", m.UUID)
		assert.Equal(t, w.Payload, string(m.Payload))
		if prev, ok := lastSeq[w.Key]; ok {
			require.Less(t, prev, w.Seq, "key %s: seq %d delivered after %d", w.Key, w.Seq, prev)
		}
		lastSeq[w.Key] = w.Seq
	}
	require.Len(t, seen, len(want))
}

func length(t *testing.T, adm *admin.Admin, topic string) int64 {
	t.Helper()
	q, err := adm.QueueInfo(context.Background(), topic)
	require.NoError(t, err)
	return q.Length
}

// TestImportRedisstreamMovesWhatTheOldGroupHadNotAcked is the migration of a live
// watermill-redisstream topic: its publisher sends 10,000 messages over 100 keys, two of its
// subscribers ack 5,000 and leave some delivered and not acked (pending). A dry run reports
// the other 5,000 and appends nothing; the import moves them into an 8-partition topic with
// progress up to the total; a streamq group then receives exactly those, each once, each
// key's in order, with UUID, metadata and payload intact; a second import appends nothing.
func TestImportRedisstreamMovesWhatTheOldGroupHadNotAcked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	sent := redisstreamtest.Publish(t, client, "orders", 0, 10_000, 100)
	acked := redisstreamtest.Consume(t, client, "orders", "payments", "old-1", 3_000)
	acked = append(acked, redisstreamtest.Consume(t, client, "orders", "payments", "old-2", 2_000)...)
	want := redisstreamtest.NotAcked(sent, acked)
	require.Len(t, want, 5_000)

	opts := admin.ImportOptions{Stream: "orders", Group: "payments", Partitions: 8, DryRun: true}
	dry, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	t.Logf("dry run: %d pending, %d undelivered, by partition %v", dry.Pending, dry.Undelivered, dry.ByPartition)
	assert.Equal(t, int64(5_000), dry.Imported, "dry run: what the old group had not acked")
	assert.GreaterOrEqual(t, dry.Pending, int64(2), "each old subscriber left at least its last message pending")
	assert.Equal(t, int64(5_000), dry.Pending+dry.Undelivered)
	assert.Len(t, dry.ByPartition, 8)
	_, err = adm.QueueInfo(ctx, "orders")
	require.ErrorIs(t, err, admin.ErrTopicNotFound, "a dry run creates nothing")

	var progress []admin.ImportProgress
	opts.DryRun, opts.Progress = false, func(p admin.ImportProgress) { progress = append(progress, p) }
	res, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(5_000), res.Imported)
	assert.Equal(t, dry.Pending, res.Pending)
	assert.Equal(t, dry.ByPartition, res.ByPartition, "the dry run routes as the import does")
	assert.Zero(t, res.Skipped+res.Duplicates+res.Missing+res.Acked)
	require.NotEmpty(t, progress)
	assert.Equal(t, admin.ImportProgress{Done: 5_000, Total: 5_000}, progress[len(progress)-1])
	assert.True(t, slices.IsSortedFunc(progress, func(a, b admin.ImportProgress) int { return int(a.Done - b.Done) }))

	requireReceivedOnce(t, want, receiveImported(t, client, "orders", "payments", 8, len(want)))
	assert.Equal(t, int64(5_000), length(t, adm, "orders"))

	again, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "orders", Group: "payments"})
	require.NoError(t, err)
	assert.Zero(t, again.Imported, "a second import appends nothing")
	assert.Equal(t, int64(5_000), again.Skipped)
	assert.Equal(t, int64(5_000), length(t, adm, "orders"))
}

// TestImportRedisstreamOnBackends: the import on one redis-server and on a 3-master Redis
// Cluster (the source stream, the topic's partitions and the checkpoint in different slots).
func TestImportRedisstreamOnBackends(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, client redis.UniversalClient) {
		ctx := context.Background()
		adm, err := admin.New(client, admin.Options{})
		require.NoError(t, err)
		sent := redisstreamtest.Publish(t, client, "invoices", 0, 300, 7)
		want := redisstreamtest.NotAcked(sent, redisstreamtest.Consume(t, client, "invoices", "billing", "old", 120))
		res, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "invoices", Group: "billing", Partitions: 4, BatchSize: 50})
		require.NoError(t, err)
		assert.Equal(t, int64(len(want)), res.Imported)
		requireReceivedOnce(t, want, receiveImported(t, client, "invoices", "billing", 4, len(want)))
	})
}

// TestImportRedisstreamAckSource: with SourceAck the import takes the backlog as a consumer
// of the old group and acks it: the group then holds nothing (a dry run reports 0, XINFO
// GROUPS shows no pending entry and no lag), a second import finds nothing, and messages the
// old publisher sends afterwards are imported by the next run, only they.
func TestImportRedisstreamAckSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	sent := redisstreamtest.Publish(t, client, "shipments", 0, 400, 9)
	want := redisstreamtest.NotAcked(sent, redisstreamtest.Consume(t, client, "shipments", "shipping", "old", 150))
	opts := admin.ImportOptions{Stream: "shipments", Group: "shipping", Topic: "shipments-v2", Partitions: 3,
		Source: admin.SourceAck, BatchSize: 64}
	res, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(len(want)), res.Imported)
	assert.Equal(t, int64(len(want)), res.Acked)

	groups, err := client.XInfoGroups(ctx, "shipments").Result()
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Zero(t, groups[0].Pending, "nothing pending")
	assert.Zero(t, groups[0].Lag, "nothing undelivered")
	opts.DryRun = true
	dry, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Zero(t, dry.Pending+dry.Undelivered, "the old group is drained")
	opts.DryRun = false
	again, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Zero(t, again.Imported+again.Skipped)

	later := redisstreamtest.Publish(t, client, "shipments", 400, 25, 9)
	res, err = adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(25), res.Imported)
	requireReceivedOnce(t, append(want, later...), receiveImported(t, client, "shipments-v2", "shipping", 3, len(want)+25))
}

// TestImportRedisstreamCheckpointAndWindow: the checkpoint alone keeps a run again from
// appending anything (the idempotency window off), and picks up what arrived since; with the
// checkpoint lost (a run stopped between its append and its checkpoint), the window drops
// every message a run again sends (Duplicates).
func TestImportRedisstreamCheckpointAndWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	redisstreamtest.Publish(t, client, "a", 0, 120, 5)
	redisstreamtest.Publish(t, client, "b", 0, 120, 5)
	require.NoError(t, client.XGroupCreate(ctx, "a", "g", "0").Err())
	require.NoError(t, client.XGroupCreate(ctx, "b", "g", "0").Err())

	off := admin.ImportOptions{Stream: "a", Group: "g", Partitions: 2, IdempotencyWindow: -1, BatchSize: 50}
	_, err = adm.ImportRedisstream(ctx, off)
	require.NoError(t, err)
	redisstreamtest.Publish(t, client, "a", 120, 10, 5)
	res, err := adm.ImportRedisstream(ctx, off)
	require.NoError(t, err)
	assert.Equal(t, int64(10), res.Imported, "only what arrived since")
	assert.Equal(t, int64(120), res.Skipped)
	assert.Equal(t, int64(130), length(t, adm, "a"))

	on := admin.ImportOptions{Stream: "b", Group: "g", Partitions: 2, BatchSize: 50}
	first, err := adm.ImportRedisstream(ctx, on)
	require.NoError(t, err)
	require.NoError(t, client.Del(ctx, first.Checkpoint).Err())
	res, err = adm.ImportRedisstream(ctx, on)
	require.NoError(t, err)
	assert.Zero(t, res.Imported)
	assert.Equal(t, int64(120), res.Duplicates)
	assert.Equal(t, int64(120), length(t, adm, "b"))
}

// noClose lends a client to watermill-redisstream, whose Publisher closes its client.
type noClose struct{ redis.UniversalClient }

func (noClose) Close() error { return nil }

// TestImportRedisstreamCheckpointNeverMovesBack: a run again goes through the old group's
// pending entries first, all older than the checkpoint; one stopped right after them (its
// context cancelled) leaves the checkpoint where it was, so the next run appends nothing,
// the idempotency window off.
func TestImportRedisstreamCheckpointNeverMovesBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	sent := redisstreamtest.Publish(t, client, "back", 0, 100, 4)
	want := redisstreamtest.NotAcked(sent, redisstreamtest.Consume(t, client, "back", "g", "old", 30))
	opts := admin.ImportOptions{Stream: "back", Group: "g", Partitions: 2, IdempotencyWindow: -1, BatchSize: 10}
	first, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), first.Imported)
	require.Positive(t, first.Pending)

	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	opts.Progress = func(admin.ImportProgress) { cancel() }
	cut, err := adm.ImportRedisstream(stop, opts)
	require.ErrorIs(t, err, context.Canceled)
	require.Positive(t, cut.Skipped, "it went through a batch of pending entries")
	require.Less(t, cut.Skipped, int64(len(want)), "and stopped there")

	opts.Progress = nil
	again, err := adm.ImportRedisstream(ctx, opts)
	require.NoError(t, err)
	assert.Zero(t, again.Imported)
	assert.Equal(t, int64(len(want)), again.Skipped)
	assert.Equal(t, int64(len(want)), length(t, adm, "back"))
}

// fieldKeyMarshaller is watermill-redisstream's default format plus a "key" field: a custom
// Marshaller some users wrote.
type fieldKeyMarshaller struct {
	redisstream.DefaultMarshallerUnmarshaller
}

func (m fieldKeyMarshaller) Marshal(topic string, msg *message.Message) (map[string]any, error) {
	v, err := m.DefaultMarshallerUnmarshaller.Marshal(topic, msg)
	if err == nil {
		v["key"] = "field-" + msg.Metadata.Get("customer")
	}
	return v, err
}

// TestImportRedisstreamKeyFromAField: KeyField routes by an entry field, and SetKeyMetadata
// carries the key into the metadata the streamq side reads; KeyMetadata routes by another
// metadata key. Each message lands on its key's partition.
func TestImportRedisstreamKeyFromAField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: noClose{client}, Marshaller: fieldKeyMarshaller{}}, nil)
	require.NoError(t, err)
	for i := range 40 {
		m := message.NewMessage(watermill.NewUUID(), []byte("x"))
		m.Metadata.Set("customer", "c"+strconv.Itoa(i%6))
		require.NoError(t, pub.Publish("fielded", m))
	}
	require.NoError(t, client.XGroupCreate(ctx, "fielded", "g", "0").Err())
	for _, tc := range []struct {
		name string
		opts admin.ImportOptions
		key  func(*message.Message) string
	}{
		{"field", admin.ImportOptions{KeyField: "key", SetKeyMetadata: "routed_by"},
			func(m *message.Message) string { return m.Metadata.Get("routed_by") }},
		{"metadata", admin.ImportOptions{KeyMetadata: "customer"},
			func(m *message.Message) string { return m.Metadata.Get("customer") }},
	} {
		tc.opts.Stream, tc.opts.Group, tc.opts.Topic, tc.opts.Partitions = "fielded", "g", "fielded-"+tc.name, 5
		res, err := adm.ImportRedisstream(ctx, tc.opts)
		require.NoError(t, err, tc.name)
		require.Equal(t, int64(40), res.Imported, tc.name)
		for _, m := range receiveImported(t, client, tc.opts.Topic, "g", 5, 40) {
			p, _ := streamq.PartitionFromCtx(m.Context())
			key := tc.key(m)
			require.NotEmpty(t, key, tc.name)
			if tc.name == "field" {
				assert.Equal(t, "field-"+m.Metadata.Get("customer"), key)
			}
			assert.Equal(t, streamq.HashPartitioner{}.Partition(key, 5), p, "%s: key %s", tc.name, key)
		}
	}
}

// TestImportRedisstreamOffloadsLargePayloads: a payload over the Admin's Payloads.Threshold is
// stored in its own key as a Publisher stores it, and delivered whole.
func TestImportRedisstreamOffloadsLargePayloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{Payloads: streamq.PayloadConfig{Threshold: 1024}})
	require.NoError(t, err)
	big := message.NewMessage(watermill.NewUUID(), []byte(strings.Repeat("x", 4096)))
	pub, err := redisstream.NewPublisher(redisstream.PublisherConfig{Client: noClose{client}}, nil)
	require.NoError(t, err)
	require.NoError(t, pub.Publish("big", big))
	require.NoError(t, client.XGroupCreate(ctx, "big", "g", "0").Err())
	_, err = adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "big", Group: "g", Partitions: 1})
	require.NoError(t, err)
	recent, err := adm.ListRecent(ctx, "big", 1)
	require.NoError(t, err)
	require.Len(t, recent, 1)
	assert.True(t, recent[0].Offloaded)
	got := receiveImported(t, client, "big", "g", 1, 1)
	assert.Equal(t, big.UUID, got[0].UUID)
	assert.Equal(t, string(big.Payload), string(got[0].Payload))
}

// TestImportRedisstreamMissingPendingEntry: a pending entry deleted from the stream is
// counted as Missing and not imported; the others are.
func TestImportRedisstreamMissingPendingEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	redisstreamtest.Publish(t, client, "gone", 0, 10, 2)
	require.NoError(t, client.XGroupCreate(ctx, "gone", "g", "0").Err())
	read, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"gone", ">"}, Count: 3}).Result()
	require.NoError(t, err)
	require.NoError(t, client.XDel(ctx, "gone", read[0].Messages[1].ID).Err())
	res, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "gone", Group: "g", Partitions: 1})
	require.NoError(t, err)
	assert.Equal(t, admin.ImportResult{Stream: "gone", Group: "g", Topic: "gone", TargetGroup: "g", Source: admin.SourceKeep,
		Partitions: 1, Pending: 3, Undelivered: 7, Imported: 9, ByPartition: map[int]int64{0: 9}, Missing: 1,
		Checkpoint: res.Checkpoint, LastID: res.LastID}, res)
}

// TestImportRedisstreamErrors: what an import refuses, and with which error.
func TestImportRedisstreamErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	redisstreamtest.Publish(t, client, "src", 0, 3, 1)
	require.NoError(t, client.XGroupCreate(ctx, "src", "g", "0").Err())
	require.NoError(t, adm.CreateTopic(ctx, "four", 4))
	require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: "bad", Values: []any{"payload", "no uuid"}}).Err())
	require.NoError(t, client.XGroupCreate(ctx, "bad", "g", "0").Err())
	for _, tc := range []struct {
		name string
		opts admin.ImportOptions
		want error
	}{
		{"no stream", admin.ImportOptions{Stream: "nope", Group: "g", Partitions: 1}, admin.ErrGroupNotFound},
		{"no group", admin.ImportOptions{Stream: "src", Group: "nope", Partitions: 1}, admin.ErrGroupNotFound},
		{"no group name", admin.ImportOptions{Stream: "src"}, admin.ErrInvalidArgument},
		{"two keys", admin.ImportOptions{Stream: "src", Group: "g", KeyMetadata: "a", KeyField: "b"}, admin.ErrInvalidArgument},
		{"bad source", admin.ImportOptions{Stream: "src", Group: "g", Source: "delete"}, admin.ErrInvalidArgument},
		{"bad window", admin.ImportOptions{Stream: "src", Group: "g", IdempotencyWindow: time.Microsecond}, admin.ErrInvalidArgument},
		{"bad topic", admin.ImportOptions{Stream: "src", Group: "g", Topic: "a{b}"}, admin.ErrInvalidArgument},
		{"new topic, no count", admin.ImportOptions{Stream: "src", Group: "g"}, admin.ErrInvalidArgument},
		{"other count", admin.ImportOptions{Stream: "src", Group: "g", Topic: "four", Partitions: 8}, admin.ErrInvalidArgument},
		{"malformed", admin.ImportOptions{Stream: "bad", Group: "g", Partitions: 1}, streamq.ErrMalformedEntry},
	} {
		_, err := adm.ImportRedisstream(ctx, tc.opts)
		require.ErrorIs(t, err, tc.want, tc.name)
	}

	require.NoError(t, client.Set(ctx, "streaming:mq:import:{four}:lock", "another", time.Minute).Err())
	_, err = adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "src", Group: "g", Topic: "four"})
	require.ErrorIs(t, err, admin.ErrImportRunning)
	res, err := adm.ImportRedisstream(ctx, admin.ImportOptions{Stream: "src", Group: "g", Topic: "four", DryRun: true})
	require.NoError(t, err, "a dry run takes no lock")
	assert.Equal(t, int64(3), res.Imported)
}
