package streamq_test

import (
	"context"
	"errors"
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
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamid"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// letterSeen is what a handler saw of one delivery.
type letterSeen struct {
	streamID, originalID string
	partition, retries   int
	letter               streamq.DeadLetterInfo
	isLetter             bool
	replayedFrom         string
}

func letterSeenOf(m *message.Message) letterSeen {
	ctx := m.Context()
	s := letterSeen{replayedFrom: m.Metadata.Get(streamq.ReplayedFromMetadata)}
	s.streamID, _ = streamq.StreamIDFromCtx(ctx)
	s.originalID, _ = streamq.OriginalIDFromCtx(ctx)
	s.partition, _ = streamq.PartitionFromCtx(ctx)
	s.retries, _ = streamq.RetryCountFromCtx(ctx)
	s.letter, s.isLetter = streamq.DeadLetterFromCtx(ctx)
	return s
}

// letterLog records deliveries by payload, from handler goroutines.
type letterLog struct {
	mu sync.Mutex
	by map[string][]letterSeen
}

func (l *letterLog) add(m *message.Message) letterSeen {
	s := letterSeenOf(m)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string][]letterSeen{}
	}
	l.by[string(m.Payload)] = append(l.by[string(m.Payload)], s)
	return s
}

func (l *letterLog) get(payload string) []letterSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]letterSeen(nil), l.by[payload]...)
}

// TestDLQHandlerResults: a Router handler of a DLQTopic reads every field of the dead
// letter's record through DeadLetterFromCtx, and OriginalIDFromCtx is the message's first
// stream id whether it was retried or not; an ack keeps the letter, Replay appends it back to
// its partition (and keeps it), Drop deletes it, DeadLetter on a dead letter deletes it too
// (never redelivered), Replay with Drop replays and deletes it.
func TestDLQHandlerResults(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQHandlerResults)
}

func testDLQHandlerResults(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	const topic, partitions = "letters", 3
	space := keys.New("", "")
	start := time.Now()
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})

	// The workers dead-letter "invalid-*" at once and fail "flaky-*" until retries run out
	// (2, retried at once); replays are recorded and acked.
	workCfg := streamqtest.FastSub(client, "workers")
	workCfg.DefaultPartitionCount = partitions
	workCfg.Retry.Policy = streamq.ExponentialBackoff{}
	workCfg.Retry.MaxRetries = 2
	work, replays := &letterLog{}, &letterLog{}
	rtRouter(t, streamqtest.NewSubscriber(t, workCfg), topic, func(m *message.Message) error {
		if m.Metadata.Get(streamq.ReplayedFromMetadata) != "" {
			replays.add(m)
			return nil
		}
		work.add(m)
		if strings.HasPrefix(string(m.Payload), "invalid") {
			return streamq.DeadLetter(m, errors.New("invalid "+string(m.Payload)))
		}
		return errors.New("flaky " + string(m.Payload))
	})
	letters := map[string]int{ // payload -> partition
		"invalid-ack": 0, "invalid-replay": 1, "flaky-drop": 2, "invalid-fail": 0, "flaky-move": 1,
	}
	for payload, p := range letters {
		require.NoError(t, pub.Publish(topic, forced(payload, p)))
	}
	waitDLQLen(t, client, topic, partitions, int64(len(letters)))

	// Group "ops" handles the dead letters through a Router.
	opsCfg := streamqtest.FastSub(client, "ops")
	ops := &letterLog{}
	rtRouter(t, streamqtest.NewSubscriber(t, opsCfg), streamq.DLQTopic(topic), func(m *message.Message) error {
		ops.add(m)
		switch string(m.Payload) {
		case "invalid-replay":
			streamq.Replay(m)
		case "flaky-drop":
			streamq.Drop(m)
		case "invalid-fail":
			return streamq.DeadLetter(m, errors.New("cannot be saved"))
		case "flaky-move":
			streamq.Replay(m)
			streamq.Drop(m)
		}
		return nil
	})

	// Two replays reach the workers; the two kept letters are all the DLQ holds, and ops
	// has nothing pending.
	require.Eventually(t, func() bool {
		return len(replays.get("invalid-replay")) == 1 && len(replays.get("flaky-move")) == 1
	}, 15*time.Second, 10*time.Millisecond, "replays delivered")
	waitDLQLen(t, client, topic, partitions, 2)
	require.Eventually(t, func() bool {
		for p := 0; p < partitions; p++ {
			if streamqtest.GroupPending(t, client, space.DLQ(topic, p), "ops") != 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "ops acked or dropped every letter")

	for payload, p := range letters {
		t.Run(payload, func(t *testing.T) {
			tries, seen := work.get(payload), ops.get(payload)
			require.NotEmpty(t, tries)
			require.Len(t, seen, 1, "delivered once on the DLQ topic")
			first, last, d := tries[0], tries[len(tries)-1], seen[0]
			assert.False(t, first.isLetter, "no dead letter on a topic")

			retried := strings.HasPrefix(payload, "flaky")
			want := streamq.DeadLetterInfo{
				Reason: "invalid " + payload, Group: "workers", OriginalTopic: topic, OriginalPartition: p,
				OriginalStreamID: last.streamID, OriginalMessageID: first.streamID,
				Timestamp: streamid.Time(first.streamID), MaxRetries: 2,
			}
			if retried {
				require.Len(t, tries, 3, "two retries")
				want.Reason, want.RetryCount = "retries exhausted (2): nacked", 2
			}
			require.True(t, d.isLetter, "DeadLetterFromCtx on the DLQ topic")
			got := d.letter
			assert.WithinRange(t, got.FailedAt, start.Truncate(time.Millisecond), time.Now())
			got.FailedAt = time.Time{}
			assert.Equal(t, want, got)
			// OriginalIDFromCtx is the first stream id, not the DLQ entry's: the two may still be
			// equal strings, when the letter was written in the millisecond of the publish (two
			// streams, one clock).
			assert.Equal(t, first.streamID, d.originalID, "OriginalIDFromCtx is the first stream id")
			assert.Equal(t, want.RetryCount, d.retries)
			assert.Equal(t, p, d.partition)

			dlqIDs := streamIDs(t, client, space.DLQ(topic, p))
			kept := payload == "invalid-ack" || payload == "invalid-replay"
			assert.Equal(t, kept, dlqIDs[d.streamID], "letter kept in the DLQ")
			rep := replays.get(payload)
			if payload == "invalid-replay" || payload == "flaky-move" {
				require.Len(t, rep, 1)
				assert.Equal(t, p, rep[0].partition, "replayed to its partition")
				assert.Equal(t, d.streamID, rep[0].replayedFrom)
				assert.Equal(t, first.streamID, rep[0].originalID)
				assert.Zero(t, rep[0].retries, "the retry count is reset")
			} else {
				assert.Empty(t, rep, "not replayed")
			}
		})
	}
}

// streamIDs is the set of ids of a stream's entries.
func streamIDs(t *testing.T, client redis.UniversalClient, stream string) map[string]bool {
	t.Helper()
	es, err := client.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	out := map[string]bool{}
	for _, e := range es {
		out[e.ID] = true
	}
	return out
}

// TestDLQHandlerReplaysItsFix: a DLQ handler that changes the dead letter's payload and
// metadata before Replay replays the message as it left it; the record's marks do not come
// along.
func TestDLQHandlerReplaysItsFix(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQHandlerReplaysItsFix)
}

func testDLQHandlerReplaysItsFix(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic = "fix-and-replay"
	workers := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "workers"))
	ch, err := workers.Subscribe(ctx, topic)
	require.NoError(t, err)
	fixers := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "fixers"))
	letters, err := fixers.Subscribe(ctx, streamq.DLQTopic(topic))
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sent := message.NewMessage(watermill.NewUUID(), []byte("broken"))
	sent.Metadata.Set("keep", "me")
	require.NoError(t, pub.Publish(topic, sent))

	first := nextMsg(t, ch, 10*time.Second)
	_ = streamq.DeadLetter(first, nil)
	first.Nack()
	letter := nextMsg(t, letters, 10*time.Second)
	letter.Payload = []byte("fixed")
	letter.Metadata.Set("fixed-by", "fixers")
	streamq.Replay(letter)
	streamq.Drop(letter) // also delete it from the DLQ
	letter.Ack()

	again := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, sent.UUID, again.UUID)
	assert.Equal(t, "fixed", string(again.Payload), "the handler's fix is replayed")
	assert.Equal(t, "fixers", again.Metadata.Get("fixed-by"))
	assert.Equal(t, "me", again.Metadata.Get("keep"))
	for _, k := range []string{streamq.DeadLetterMetadata, streamq.ReplayMetadata, streamq.DropMetadata, streamq.RetryCountMetadata} {
		assert.Empty(t, again.Metadata.Get(k), "%s came along", k)
	}
	again.Ack()
}
