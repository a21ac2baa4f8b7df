package publish

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestEngineRecordsCountsAndTrims: each message Redis took gets its partition, and the id
// of its entry unless it was parked; every append and parking is counted as produced; the
// appends (not the parkings) drive the background length trims, which cap the partition
// at MaxLen and count what they removed.
func TestEngineRecordsCountsAndTrims(t *testing.T) {
	t.Parallel()
	const topic, maxLen, sent = "trimmed", 100, 300
	client := redistest.Start(t).Client(t)
	e, counters := newTestEngine(t, client, func(c *Config) { c.Trim = Trim{MaxLen: maxLen, Exact: true} })
	msgs := seqTestMessages(sent, "trim")
	later := message.NewMessage(watermill.NewUUID(), []byte("later"))
	later.Metadata.Set(delay.DelayedForKey, "1h")
	msgs = append(msgs, later)
	require.NoError(t, publishAll(e, topic, msgs...))

	for _, m := range msgs[:sent] {
		assert.Equal(t, "0", m.Metadata.Get(codec.HeaderPublishedPartition))
		assert.NotEmpty(t, m.Metadata.Get(codec.HeaderPublishedStreamID))
	}
	assert.Equal(t, "0", later.Metadata.Get(codec.HeaderPublishedPartition), "parked: where it will go")
	assert.Empty(t, later.Metadata.Get(codec.HeaderPublishedStreamID), "parked: no entry yet")
	assert.Equal(t, 1, int(client.ZCard(context.Background(), space.Delay(topic, 0)).Val()), "parked in the delay set")

	counters.mu.Lock()
	assert.Equal(t, map[int]int{0: sent + 1}, counters.produced, "every append and the parking")
	counters.mu.Unlock()
	stream := space.PartitionStream(topic, 0)
	require.Eventually(t, func() bool { return client.XLen(context.Background(), stream).Val() == maxLen },
		5*time.Second, 10*time.Millisecond, "trimmed to MaxLen (no group holds it back)")
	require.Eventually(t, func() bool {
		counters.mu.Lock()
		defer counters.mu.Unlock()
		return counters.trimmed["length"] == sent-maxLen
	}, 5*time.Second, 10*time.Millisecond, "each removal counted once")
}

// TestEngineRedisFull: a write Redis refuses at maxmemory fails the Publish with the error
// Errors.Full builds of the partition, the server and its memory, and the topic's refusal
// record is written; the message gets no results.
func TestEngineRedisFull(t *testing.T) {
	t.Parallel()
	const topic = "full"
	srv := redistest.Start(t)
	client := srv.Client(t)
	e, counters := newTestEngine(t, client, func(c *Config) { c.DefaultPartitionCount = 2 })
	before := message.NewMessage(watermill.NewUUID(), []byte("before"))
	before.Metadata.Set(codec.HeaderForcePartition, "0")
	require.NoError(t, publishAll(e, topic, before))
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { _ = client.ConfigSet(ctx, "maxmemory", "0").Err() })

	msg := message.NewMessage(watermill.NewUUID(), []byte("refused"))
	msg.Metadata.Set(codec.HeaderForcePartition, "1")
	err := publishAll(e, topic, msg)
	require.ErrorIs(t, err, errTestFull)
	var full *testFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, topic, full.where.Topic)
	assert.Equal(t, 1, full.where.Partition)
	assert.Equal(t, srv.Addr(), full.where.Server)
	assert.Equal(t, int64(1), full.where.MaxMemory)
	assert.Positive(t, full.where.UsedMemory)
	assert.Contains(t, full.err.Error(), "OOM", "the server's reply")
	assert.Empty(t, msg.Metadata.Get(codec.HeaderPublishedPartition), "not written")
	assert.Equal(t, int64(1), client.Exists(ctx, space.Refused(topic)).Val(), "the refusal is noted")
	counters.mu.Lock()
	assert.Equal(t, map[int]int{0: 1}, counters.produced, "nothing produced but the message before")
	counters.mu.Unlock()
}

// TestEngineNotReplicated: a pipeline whose WAIT counts fewer replicas than Replicas.N fails
// the Publish with the error Errors.NotReplicated builds; the messages were written to the
// master, so they get their results and are counted.
func TestEngineNotReplicated(t *testing.T) {
	t.Parallel()
	const topic = "alone"
	client := redistest.Start(t).Client(t)
	want := Replicas{N: 1, Timeout: 20 * time.Millisecond}
	e, counters := newTestEngine(t, client, func(c *Config) { c.Replicas = want })
	msgs := seqTestMessages(3, "alone")
	err := publishAll(e, topic, msgs...)
	require.ErrorIs(t, err, errTestNotReplicated)
	var re *testReplicationError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, &testReplicationError{want: want, acked: 0}, re)
	for i, m := range msgs {
		assert.NotEmpty(t, m.Metadata.Get(codec.HeaderPublishedStreamID), "message %d is on the master", i)
	}
	assert.Len(t, storedByUUID(t, client, topic, 1), len(msgs))
	counters.mu.Lock()
	assert.Equal(t, map[int]int{0: len(msgs)}, counters.produced)
	counters.mu.Unlock()
}
