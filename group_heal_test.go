package streamq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// healSub is a subscription of group "g" on topic with a capturing logger, acking every
// message into a set of seqs.
type healSub struct {
	sub  *streamq.Subscriber
	log  *captureLogger
	seen chan int
	ch   <-chan *message.Message
}

func startHealSub(t *testing.T, client redis.UniversalClient, topic string) *healSub {
	t.Helper()
	h := &healSub{log: newCaptureLogger(), seen: make(chan int, 1<<16)}
	var err error
	h.sub, err = streamq.NewSubscriber(streamqtest.FastSub(client, "g"), h.log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.sub.Close() })
	h.ch, err = h.sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	go func() {
		for m := range h.ch {
			seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
			h.seen <- seq
			m.Ack()
		}
	}()
	return h
}

// waitSeqs waits until every seq in [from, to) was handled (duplicates allowed).
func (h *healSub) waitSeqs(t *testing.T, from, to int, timeout time.Duration) {
	t.Helper()
	missing := map[int]bool{}
	for i := from; i < to; i++ {
		missing[i] = true
	}
	deadline := time.After(timeout)
	for len(missing) > 0 {
		select {
		case s := <-h.seen:
			delete(missing, s)
		case <-deadline:
			t.Fatalf("%d of the messages %d..%d not delivered within %s", len(missing), from, to-1, timeout)
		}
	}
}

// TestGroupDestroyedUnderARunningSubscriptionIsRecreated: XGROUP DESTROY of a running group's
// streams: messages published afterwards are delivered within a few seconds, and the member
// logs the loss once per partition.
func TestGroupDestroyedUnderARunningSubscriptionIsRecreated(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testGroupDestroyedUnderARunningSubscriptionIsRecreated)
}

func testGroupDestroyedUnderARunningSubscriptionIsRecreated(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic, partitions = "destroyed", 4
	space := keys.New("", "")
	h := startHealSub(t, client, topic)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 100, nil)...))
	h.waitSeqs(t, 0, 100, 10*time.Second)

	for p := 0; p < partitions; p++ {
		require.NoError(t, client.XGroupDestroy(ctx, space.PartitionStream(topic, p), "g").Err())
	}
	require.NoError(t, pub.Publish(topic, seqMessages(100, 100, nil)...))
	h.waitSeqs(t, 100, 200, 10*time.Second)

	lines := h.log.matching("error", "consumer group was missing")
	parts := map[any]int{}
	for _, l := range lines {
		parts[l.fields["partition"]]++
	}
	assert.Len(t, parts, partitions, "a line per partition: %v", parts)
	for p, n := range parts {
		assert.Equal(t, 1, n, "partition %v logged %d times", p, n)
	}
}

// TestFlushAllUnderARunningPublisherAndSubscriber: FLUSHALL under a running Publisher and
// Subscriber of a 4-partition topic: messages published afterwards are delivered, and the topic
// is registered again with its 4 partitions.
func TestFlushAllUnderARunningPublisherAndSubscriber(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testFlushAllUnderARunningPublisherAndSubscriber)
}

func testFlushAllUnderARunningPublisherAndSubscriber(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic, partitions = "flushed", 4
	h := startHealSub(t, client, topic)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 50, nil)...))
	h.waitSeqs(t, 0, 50, 10*time.Second)

	forEachMaster(t, client, func(ctx context.Context, node *redis.Client) error { return node.FlushAll(ctx).Err() })
	for i := 50; i < 150; i += 10 {
		require.NoError(t, pub.Publish(topic, seqMessages(i, 10, nil)...))
	}
	h.waitSeqs(t, 50, 150, 20*time.Second)

	reg := partition.NewRegistry(client, keys.New("", ""))
	require.Eventually(t, func() bool {
		n, exists, err := reg.Count(ctx, topic)
		registered, _ := client.SIsMember(ctx, keys.New("", "").Registry(), topic).Result()
		return err == nil && exists && n == partitions && registered
	}, 10*time.Second, 50*time.Millisecond, "the topic is registered again with its partitions")
}

// TestGroupDeletedByForceStopsTheSubscription: a group an operator deleted by force (a
// tombstone beside the destroyed group) is not recreated: the subscription closes its channel
// and the group stays deleted a few rebalance rounds later. A new Subscribe joins again.
func TestGroupDeletedByForceStopsTheSubscription(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	const topic = "forced"
	space := keys.New("", "")
	log := newCaptureLogger()
	sub, err := streamq.NewSubscriber(streamqtest.FastSub(client, "g"), log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 2, nil)...))
	for i := 0; i < 2; i++ {
		nextMsg(t, ch, 10*time.Second).Ack()
	}

	// What admin.DeleteGroup with Force does: the tombstone, then the group goes.
	require.NoError(t, client.Set(ctx, space.GroupTombstone(topic, "g"), "1", keys.TombstoneTTL).Err())
	for p := 0; p < 2; p++ {
		require.NoError(t, client.XGroupDestroy(ctx, space.PartitionStream(topic, p), "g").Err())
	}
	require.NoError(t, pub.Publish(topic, seqMessages(2, 10, nil)...)) // reads now fail: NOGROUP
	closed := make(chan struct{})
	go func() {
		for range ch {
		}
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not stop")
	}
	assert.NotEmpty(t, log.matching("error", "deleted by force"))
	time.Sleep(5 * streamqtest.FastSub(client, "g").Membership.RebalanceInterval)
	for p := 0; p < 2; p++ {
		groups, err := client.XInfoGroups(ctx, space.PartitionStream(topic, p)).Result()
		require.NoError(t, err)
		assert.Empty(t, groups, "partition %d: the deleted group was recreated", p)
	}

	again := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	ch2, err := again.Subscribe(ctx, topic)
	require.NoError(t, err)
	nextMsg(t, ch2, 10*time.Second).Ack()
	n, err := client.Exists(ctx, space.GroupTombstone(topic, "g")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a new Subscribe clears the tombstone")
}

// TestDestroyedGroupStillHoldsItsPayloads: an offloaded payload waits for every group ever
// created on the partition, also one destroyed under its members (it is registered beside the
// stream until admin.DeleteGroup), and an ack of an entry the group does not hold (destroyed,
// or recreated after the entry was delivered) does not count the group as done with it.
func TestDestroyedGroupStillHoldsItsPayloads(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	const topic = "held-payloads"
	space := keys.New("", "")
	str := space.PartitionStream(topic, 0)
	require.NoError(t, stream.CreateGroups(ctx, client, []string{str}, "a", "0-0"))
	require.NoError(t, stream.CreateGroups(ctx, client, []string{str}, "b", "0-0"))
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	require.NoError(t, pub.Publish(topic, message.NewMessage("big", randomPayload(t, bigPayloadSize))))
	entry := streamEntries(t, client, str)[0]
	ref := payload.Ref(entry.Values)
	payloadKey := space.Payload(topic, 0, ref)
	ack := func(group string) {
		t.Helper()
		leaseKey := space.Lease(topic, 0, group)
		require.NoError(t, client.Set(ctx, leaseKey, "token", time.Minute).Err())
		k := stream.AckKeys{Lease: leaseKey, Stream: str, Commit: space.Commit(topic, 0), PayloadIndex: space.PayloadIndex(topic, 0)}
		require.NoError(t, stream.Ack(ctx, client, stream.AckBatch{Keys: k, Token: "token", Group: group, Policy: string(streamq.AckDeleteNone),
			AckSetTTL: time.Minute, Frontier: entry.ID,
			Entries: []stream.Acked{{ID: entry.ID, Ref: ref, AckSet: space.Acks(topic, 0, entry.ID), PayloadKey: payloadKey}}}))
	}
	read := func(group string) {
		t.Helper()
		got, err := client.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c", Streams: []string{str, ">"}, Block: -1}).Result()
		require.NoError(t, err)
		require.Len(t, got[0].Messages, 1)
	}
	payloadExists := func() bool {
		n, err := client.Exists(ctx, payloadKey).Result()
		require.NoError(t, err)
		return n == 1
	}
	read("a")
	read("b")
	require.NoError(t, client.XGroupDestroy(ctx, str, "a").Err())
	ack("a") // a late ack of the destroyed group: it holds nothing
	ack("b")
	assert.True(t, payloadExists(), "deleted while group a (destroyed, not deleted) has not acked it")

	// The late ack moved a's commit frontier past the entry (a handled it), so a group recreated
	// from the frontier starts after it. Without a frontier (lost with the data) it starts at
	// the group's start id and is delivered the entry again.
	require.NoError(t, client.HDel(ctx, space.Commit(topic, 0), "a").Err())
	created, pos, err := stream.Regroup(ctx, client, stream.Lost{Stream: str, Commit: space.Commit(topic, 0), Group: "a", StartID: "0-0"})
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "0-0", pos)
	ack("a") // a late ack again: the recreated group was not delivered the entry yet
	assert.True(t, payloadExists(), "deleted by an ack of an entry the recreated group does not hold")
	read("a")
	ack("a")
	assert.False(t, payloadExists(), "every group acked it: the payload goes")
}
