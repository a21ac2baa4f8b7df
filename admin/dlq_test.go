package admin_test

import (
	"context"
	"errors"
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
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// Metadata the dead-lettering handler of these tests reads.
const (
	modeKey   = "mode"   // "dead": DeadLetter + Nack; "retry": Nack until retries are exhausted
	reasonKey = "reason" // reason given to streamq.DeadLetter (default "bad")
)

const workers = "workers" // the consumer group that dead-letters

type env struct {
	t      *testing.T
	client *redis.Client
	adm    *admin.Admin
	pub    *streamq.Publisher
	space  keys.Space
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := redistest.Start(t)
	client := srv.Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return &env{t: t, client: client, adm: adm, pub: pub, space: keys.New("", "")}
}

func fastSub(client redis.UniversalClient, group string, partitions int) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:                client,
		ConsumerGroup:         group,
		DefaultPartitionCount: partitions,
		Membership:            streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Reclaim:               streamq.ReclaimConfig{ScanInterval: time.Second, Idle: 3 * time.Second},
		Read:                  streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:              streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		// Two immediate retries, then the DLQ.
		Retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 2}, MoverInterval: 100 * time.Millisecond},
	}
}

// msg builds a message; mode "dead" is dead-lettered by the handler at once, "retry" is
// nacked until its two retries are exhausted. partition >= 0 forces the partition.
func msg(payload, mode, reason string, partition int) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), []byte(payload))
	m.Metadata.Set(modeKey, mode)
	m.Metadata.Set("custom", "v-"+payload)
	if reason != "" {
		m.Metadata.Set(reasonKey, reason)
	}
	if partition >= 0 {
		m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(partition))
	}
	return m
}

// deadLetter registers topic with partitions, publishes msgs and runs a group "workers"
// whose handler fails every one of them, until the topic's DLQ holds want entries.
func (e *env) deadLetter(topic string, partitions int, want int64, msgs ...*message.Message) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := streamq.NewSubscriber(fastSub(e.client, workers, partitions), watermill.NopLogger{})
	require.NoError(t, err)
	defer func() { require.NoError(t, sub.Close()) }()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			if m.Metadata.Get(modeKey) == "dead" {
				reason := m.Metadata.Get(reasonKey)
				if reason == "" {
					reason = "bad"
				}
				_ = streamq.DeadLetter(m, errors.New(reason))
			}
			m.Nack()
		}
	}()
	require.NoError(t, e.pub.Publish(topic, msgs...))
	require.Eventually(t, func() bool {
		n, err := e.adm.DLQSize(context.Background(), topic)
		return err == nil && n == want
	}, 15*time.Second, 20*time.Millisecond, "DLQ of %q never reached %d entries", topic, want)
	require.NoError(t, sub.Close())
	wg.Wait()
}

func (e *env) size(topic string) int64 {
	e.t.Helper()
	n, err := e.adm.DLQSize(context.Background(), topic)
	require.NoError(e.t, err)
	return n
}

func (e *env) entries(topic string) []admin.DeadLetter {
	e.t.Helper()
	all, err := e.adm.DLQEntries(context.Background(), topic, 0)
	require.NoError(e.t, err)
	return all
}

// streamEntries reads partition p of topic.
func (e *env) streamEntries(topic string, p int) []redis.XMessage {
	e.t.Helper()
	msgs, err := e.client.XRange(context.Background(), e.space.PartitionStream(topic, p), "-", "+").Result()
	require.NoError(e.t, err)
	return msgs
}

func (e *env) totalStreamLen(topic string, partitions int) int64 {
	e.t.Helper()
	var n int64
	for p := 0; p < partitions; p++ {
		l, err := e.client.XLen(context.Background(), e.space.PartitionStream(topic, p)).Result()
		require.NoError(e.t, err)
		n += l
	}
	return n
}

func byUUID(all []admin.DeadLetter) map[string]admin.DeadLetter {
	out := map[string]admin.DeadLetter{}
	for _, d := range all {
		out[d.UUID] = d
	}
	return out
}

func TestDLQEntriesDecoded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic, empty = "orders", "quiet"
	dead := msg("p-dead", "dead", "invalid order", 1)
	retried := msg("p-retry", "retry", "", 2)
	before := time.Now().Add(-time.Second)
	e.deadLetter(topic, 4, 2, dead, retried)

	// A topic whose DLQ is empty is registered but not listed by DLQTopics.
	require.NoError(t, e.pub.Publish(empty, message.NewMessage(watermill.NewUUID(), []byte("ok"))))

	assert.Equal(t, int64(2), e.size(topic))
	assert.Equal(t, int64(0), e.size(empty))
	topics, err := e.adm.DLQTopics(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{topic}, topics)

	all := e.entries(topic)
	require.Len(t, all, 2)
	got := byUUID(all)

	// Explicit dead letter: no retries, reason as given, first delivery is the original.
	d, ok := got[dead.UUID]
	require.True(t, ok, "dead letter of %s missing: %+v", dead.UUID, all)
	first := e.streamEntries(topic, 1)
	require.NotEmpty(t, first)
	assert.Equal(t, topic, d.Topic)
	assert.Equal(t, 1, d.Partition)
	assert.Equal(t, "invalid order", d.Reason)
	assert.Equal(t, workers, d.Group)
	assert.Equal(t, 0, d.RetryCount)
	assert.Equal(t, 2, d.MaxRetries)
	assert.Equal(t, first[0].ID, d.OriginalMessageID)
	assert.Equal(t, first[0].ID, d.OriginalStreamID)
	assert.Equal(t, []byte("p-dead"), d.Payload)
	assert.Equal(t, "v-p-dead", d.Metadata["custom"])
	assert.Equal(t, "invalid order", d.Metadata[streamq.DeadLetterMetadata])
	assert.Empty(t, d.Raw)
	assert.True(t, d.FailedAt.After(before), "FailedAt %v", d.FailedAt)
	assert.False(t, d.Timestamp.IsZero())
	assert.NotEmpty(t, d.ID)

	// Retries exhausted: the retry count, the first entry's id, and the last delivery's id.
	r, ok := got[retried.UUID]
	require.True(t, ok, "dead letter of %s missing: %+v", retried.UUID, all)
	part2 := e.streamEntries(topic, 2)
	require.Len(t, part2, 3, "original + two retries in partition 2")
	assert.Equal(t, 2, r.Partition)
	assert.Equal(t, workers, r.Group)
	assert.Equal(t, 2, r.RetryCount)
	assert.Contains(t, r.Reason, "retries exhausted (2)")
	assert.Equal(t, part2[0].ID, r.OriginalMessageID)
	assert.Equal(t, part2[2].ID, r.OriginalStreamID)
	assert.Equal(t, []byte("p-retry"), r.Payload)
	assert.Equal(t, "v-p-retry", r.Metadata["custom"])
	assert.Equal(t, "2", r.Metadata[streamq.RetryCountMetadata])
	assert.Equal(t, part2[0].ID, r.Metadata[streamq.OriginalIDMetadata])
	assert.NotContains(t, r.Metadata, streamq.RetryGroupMetadata)
	assert.Equal(t, r.Reason, r.Metadata[streamq.DeadLetterMetadata])

	// DLQEntry reads one of them back the same way.
	one, err := e.adm.DLQEntry(ctx, topic, d.Partition, d.ID)
	require.NoError(t, err)
	assert.Equal(t, d, one)

	// Oldest first, and the limit applies.
	assert.False(t, all[1].FailedAt.Before(all[0].FailedAt))
	limited, err := e.adm.DLQEntries(ctx, topic, 1)
	require.NoError(t, err)
	require.Len(t, limited, 1)
	assert.Equal(t, all[0].ID, limited[0].ID)
}

func TestDLQReplayToOriginalPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "payments"
	original := msg("p5", "retry", "", 5) // retried twice, so it carries x-retry-count
	e.deadLetter(topic, 8, 1, original)
	all := e.entries(topic)
	require.Len(t, all, 1)
	d := all[0]
	require.Equal(t, 5, d.Partition)
	require.Equal(t, "2", d.Metadata[streamq.RetryCountMetadata])
	before := e.streamEntries(topic, 5)
	require.Len(t, before, 3)

	newID, err := e.adm.ReplayDeadLetter(ctx, topic, 5, d.ID, admin.ReplayOptions{AllGroups: true}) // a fresh group gets it too
	require.NoError(t, err)
	require.NotEmpty(t, newID)
	assert.Equal(t, int64(1), e.size(topic), "a replay keeps the DLQ entry by default")

	after := e.streamEntries(topic, 5)
	require.Len(t, after, 4)
	last := after[3]
	assert.Equal(t, newID, last.ID)
	assert.Equal(t, int64(4), e.totalStreamLen(topic, 8), "nothing appended to other partitions")
	uuid, _ := last.Values[streamq.UUIDField].(string)
	assert.Equal(t, original.UUID, uuid)
	assert.Equal(t, "p5", last.Values[streamq.PayloadField])

	// A fresh group consumes the replay to every group from partition 5, without the retry marks.
	sub, err := streamq.NewSubscriber(fastSub(e.client, "fresh", 8), watermill.NopLogger{})
	require.NoError(t, err)
	defer func() { _ = sub.Close() }()
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := sub.Subscribe(subCtx, topic)
	require.NoError(t, err)
	var replayed *message.Message
	timeout := time.After(10 * time.Second)
	for replayed == nil {
		select {
		case m := <-ch:
			m.Ack()
			if m.Metadata.Get(streamq.ReplayedFromMetadata) != "" {
				replayed = m
			}
		case <-timeout:
			t.Fatal("replayed message not delivered to a fresh group")
		}
	}
	p, _ := streamq.PartitionFromCtx(replayed.Context())
	id, _ := streamq.StreamIDFromCtx(replayed.Context())
	assert.Equal(t, 5, p)
	assert.Equal(t, newID, id)
	assert.Equal(t, original.UUID, replayed.UUID)
	assert.Equal(t, []byte("p5"), []byte(replayed.Payload))
	assert.Equal(t, d.ID, replayed.Metadata.Get(streamq.ReplayedFromMetadata))
	assert.Equal(t, "v-p5", replayed.Metadata.Get("custom"))
	assert.NotContains(t, replayed.Metadata, streamq.RetryCountMetadata)
	assert.NotContains(t, replayed.Metadata, streamq.RetryGroupMetadata)
	assert.NotContains(t, replayed.Metadata, streamq.DeadLetterMetadata)
	assert.Equal(t, before[0].ID, replayed.Metadata.Get(streamq.OriginalIDMetadata))
	retries, _ := streamq.RetryCountFromCtx(replayed.Context())
	assert.Equal(t, 0, retries)
	require.NoError(t, sub.Close())

	// Replayed before: nothing happens without Again. With Delete the entry leaves the DLQ.
	_, err = e.adm.ReplayDeadLetter(ctx, topic, 5, d.ID, admin.ReplayOptions{Delete: true})
	require.ErrorIs(t, err, admin.ErrAlreadyReplayed)
	assert.Len(t, e.streamEntries(topic, 5), 4)
	newID2, err := e.adm.ReplayDeadLetter(ctx, topic, 5, d.ID, admin.ReplayOptions{Delete: true, Again: true})
	require.NoError(t, err)
	assert.NotEqual(t, newID, newID2)
	assert.Equal(t, int64(0), e.size(topic))
	assert.Len(t, e.streamEntries(topic, 5), 5)

	// Gone now.
	_, err = e.adm.ReplayDeadLetter(ctx, topic, 5, d.ID, admin.ReplayOptions{})
	assert.ErrorIs(t, err, admin.ErrEntryNotFound)
}

func TestDLQDeleteAndClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "invoices"
	e.deadLetter(topic, 2, 3, msg("a", "dead", "", 0), msg("b", "dead", "", 1), msg("c", "dead", "", 1))
	all := e.entries(topic)
	require.Len(t, all, 3)
	dead := all[0]

	// Stream ids are per stream: another partition's DLQ may hold the same id when both were
	// written in the same millisecond. Pick an id of partition 1 that partition 0 lacks.
	ids := map[int]map[string]bool{0: {}, 1: {}}
	for _, d := range all {
		ids[d.Partition][d.ID] = true
	}
	foreign := ""
	for id := range ids[1] {
		if !ids[0][id] {
			foreign = id
		}
	}
	require.NotEmpty(t, foreign, "partition 1 holds two distinct ids")

	tests := []struct {
		name      string
		partition int
		id        string
		want      bool
		wantErr   error
		wantSize  int64
	}{
		{"unknown id", dead.Partition, "1-1", false, nil, 3},
		{"not a stream id", dead.Partition, "nope", false, admin.ErrInvalidArgument, 3},
		{"empty id", dead.Partition, "", false, admin.ErrInvalidArgument, 3},
		{"id of another partition", 0, foreign, false, nil, 3},
		{"real", dead.Partition, dead.ID, true, nil, 2},
		{"real again", dead.Partition, dead.ID, false, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ok bool
			var err error
			require.NotPanics(t, func() { ok, err = e.adm.DeleteDeadLetter(ctx, topic, tt.partition, tt.id) })
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				_, getErr := e.adm.DLQEntry(ctx, topic, tt.partition, tt.id)
				require.ErrorIs(t, getErr, tt.wantErr, "DLQEntry agrees")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, ok)
			assert.Equal(t, tt.wantSize, e.size(topic))
		})
	}

	n, err := e.adm.ClearDLQ(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	assert.Equal(t, int64(0), e.size(topic))
	assert.Empty(t, e.entries(topic))
	topics, err := e.adm.DLQTopics(ctx)
	require.NoError(t, err)
	assert.Empty(t, topics)

	n, err = e.adm.ClearDLQ(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(0), n, "clearing an empty DLQ removes nothing")
}

func TestDLQReplayAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic, partitions = "shipments", 4
	var msgs []*message.Message
	withX := 0
	for i := 0; i < 10; i++ {
		reason := "bad"
		if i%3 == 0 { // 0, 3, 6, 9
			reason = fmt.Sprintf("xbad-%d", i)
			withX++
		}
		msgs = append(msgs, msg(fmt.Sprintf("m%d", i), "dead", reason, i%partitions))
	}
	e.deadLetter(topic, partitions, 10, msgs...)
	base := e.totalStreamLen(topic, partitions)
	require.Equal(t, int64(10), base)

	onlyX := func(d admin.DeadLetter) bool { return strings.Contains(d.Reason, "x") }
	tests := []struct {
		name  string
		limit int
		keep  func(admin.DeadLetter) bool
		want  int
	}{
		{"all", 100, nil, 10},
		{"exactly all", 10, nil, 10},
		{"limit", 4, nil, 4},
		{"filter", 100, onlyX, withX},
		{"filter and limit", 2, onlyX, 2},
		{"filter keeping none", 100, func(admin.DeadLetter) bool { return false }, 0},
	}
	appended := int64(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := e.adm.ReplayAll(ctx, topic, tt.limit, tt.keep, admin.ReplayOptions{Again: true})
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
			appended += int64(n)
			assert.Equal(t, base+appended, e.totalStreamLen(topic, partitions))
			assert.Equal(t, int64(10), e.size(topic), "replays keep the DLQ entries")
		})
	}

	// Every entry, original or replayed, is in the partition it names (the originals were
	// forced there, the replays carry x-force-partition-id of their dead letter).
	for p := 0; p < partitions; p++ {
		for _, m := range e.streamEntries(topic, p) {
			assert.Equal(t, strconv.Itoa(p), metadataOf(t, m)[streamq.ForcePartitionMetadata], "entry %s", m.ID)
		}
	}

	// With Delete, the replayed entries leave the DLQ.
	n, err := e.adm.ReplayAll(ctx, topic, 100, onlyX, admin.ReplayOptions{Delete: true, Again: true})
	require.NoError(t, err)
	assert.Equal(t, withX, n)
	assert.Equal(t, int64(10-withX), e.size(topic))
	for _, d := range e.entries(topic) {
		assert.NotContains(t, d.Reason, "x")
	}
	n, err = e.adm.ReplayAll(ctx, topic, 100, nil, admin.ReplayOptions{Delete: true, Again: true})
	require.NoError(t, err)
	assert.Equal(t, 10-withX, n)
	assert.Equal(t, int64(0), e.size(topic))
}

// metadataOf decodes the metadata of a stream entry.
func metadataOf(t *testing.T, m redis.XMessage) map[string]string {
	t.Helper()
	msg, err := streamq.DefaultMarshaler{}.Unmarshal(m.Values)
	require.NoError(t, err)
	return msg.Metadata
}

func TestDLQErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "known"
	e.deadLetter(topic, 3, 1, msg("a", "dead", "", 2))
	d := e.entries(topic)[0]

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"size unknown topic", func() error { _, err := e.adm.DLQSize(ctx, "nope"); return err }, admin.ErrTopicNotFound},
		{"entries unknown topic", func() error { _, err := e.adm.DLQEntries(ctx, "nope", 10); return err }, admin.ErrTopicNotFound},
		{"entry unknown topic", func() error { _, err := e.adm.DLQEntry(ctx, "nope", 0, d.ID); return err }, admin.ErrTopicNotFound},
		{"replay all unknown topic", func() error { _, err := e.adm.ReplayAll(ctx, "nope", 10, nil, admin.ReplayOptions{}); return err }, admin.ErrTopicNotFound},
		{"clear unknown topic", func() error { _, err := e.adm.ClearDLQ(ctx, "nope"); return err }, admin.ErrTopicNotFound},
		{"replay unknown topic", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, "nope", 0, d.ID, admin.ReplayOptions{})
			return err
		}, admin.ErrTopicNotFound},
		{"delete unknown topic", func() error { _, err := e.adm.DeleteDeadLetter(ctx, "nope", 0, d.ID); return err }, admin.ErrTopicNotFound},
		{"DLQ topic name is not a topic", func() error { _, err := e.adm.DLQSize(ctx, streamq.DLQTopic(topic)); return err }, admin.ErrTopicNotFound},
		{"invalid topic name", func() error { _, err := e.adm.DLQSize(ctx, "a{b}"); return err }, admin.ErrInvalidArgument},
		{"entry partition too high", func() error { _, err := e.adm.DLQEntry(ctx, topic, 3, d.ID); return err }, admin.ErrInvalidArgument},
		{"replay partition negative", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, -1, d.ID, admin.ReplayOptions{})
			return err
		}, admin.ErrInvalidArgument},
		{"replay partition too high", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, 3, d.ID, admin.ReplayOptions{})
			return err
		}, admin.ErrInvalidArgument},
		{"delete partition too high", func() error { _, err := e.adm.DeleteDeadLetter(ctx, topic, 7, d.ID); return err }, admin.ErrInvalidArgument},
		{"replay unknown id", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, 2, "1-1", admin.ReplayOptions{})
			return err
		}, admin.ErrEntryNotFound},
		{"replay id of another partition", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, 0, d.ID, admin.ReplayOptions{})
			return err
		}, admin.ErrEntryNotFound},
		{"replay bad id", func() error {
			_, err := e.adm.ReplayDeadLetter(ctx, topic, 2, "nope", admin.ReplayOptions{})
			return err
		}, admin.ErrInvalidArgument},
		{"entry unknown id", func() error { _, err := e.adm.DLQEntry(ctx, topic, 2, "1-1"); return err }, admin.ErrEntryNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tt.call() })
			require.ErrorIs(t, err, tt.want)
		})
	}
	assert.Equal(t, int64(1), e.size(topic), "no failed call changed the DLQ")

	_, err := admin.New(nil, admin.Options{})
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
	var typedNil *redis.Client
	_, err = admin.New(typedNil, admin.Options{})
	assert.ErrorIs(t, err, admin.ErrInvalidArgument, "a typed-nil client")
}

// A group consuming the DLQ as a topic keeps receiving dead letters after ClearDLQ.
func TestDLQClearKeepsDLQConsumers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic = "cleared"
	e.deadLetter(topic, 1, 1, msg("before", "dead", "", 0))

	cfg := fastSub(e.client, "ops", 1)
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(ctx, streamq.DLQTopic(topic))
	require.NoError(t, err)
	got := make(chan string, 10)
	go func() {
		for m := range ch {
			got <- string(m.Payload)
			m.Ack()
		}
	}()
	select {
	case p := <-got:
		require.Equal(t, "before", p)
	case <-time.After(10 * time.Second):
		t.Fatal("dead letter not delivered on the DLQ topic")
	}

	n, err := e.adm.ClearDLQ(ctx, topic)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	groups, err := e.client.XInfoGroups(ctx, e.space.DLQ(topic, 0)).Result()
	require.NoError(t, err)
	require.NotEmpty(t, groups, "ClearDLQ keeps the groups of DLQ-topic subscribers")

	e.deadLetter(topic, 1, 1, msg("after", "dead", "", 0))
	select {
	case p := <-got:
		assert.Equal(t, "after", p)
	case <-time.After(5 * time.Second):
		t.Fatal("dead letter written after ClearDLQ not delivered on the DLQ topic")
	}
}

// TestDLQReplayAllCountsWhatItReplayed: a dead letter deleted between its read and its
// replay is skipped: not counted, and not using up the limit.
func TestDLQReplayAllCountsWhatItReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const topic, partitions = "gone", 2
	var msgs []*message.Message
	for i := 0; i < 6; i++ {
		msgs = append(msgs, msg(fmt.Sprintf("m%d", i), "dead", "bad", i%partitions))
	}
	e.deadLetter(topic, partitions, 6, msgs...)
	before := e.totalStreamLen(topic, partitions)
	seen := 0
	n, err := e.adm.ReplayAll(ctx, topic, 3, func(d admin.DeadLetter) bool {
		if seen++; seen <= 2 { // deleted by someone else meanwhile
			ok, err := e.adm.DeleteDeadLetter(ctx, topic, d.Partition, d.ID)
			require.NoError(t, err)
			require.True(t, ok)
		}
		return true
	}, admin.ReplayOptions{})
	require.NoError(t, err)
	assert.Equal(t, 3, n, "two letters were gone: three others were replayed")
	assert.Equal(t, 5, seen, "the limit counts replays only")
	assert.Equal(t, before+3, e.totalStreamLen(topic, partitions), "what was appended is what was counted")
	assert.Equal(t, int64(4), e.size(topic))
}
