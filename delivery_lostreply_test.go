package streamq_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// loseReadReply is a go-redis hook that, once armed, lets Redis run the next read round
// that returns new entries and then loses its reply: Redis delivered the entries to the
// member (they are in its pending list) but the member never sees them. With resend, the
// round is sent again, as go-redis does after a dropped connection; without, the round
// fails as if the retries ran out.
type loseReadReply struct {
	armed  atomic.Bool
	resend bool
	during func() // runs while the reply is lost, before the round is resent or fails
}

func (h *loseReadReply) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *loseReadReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *loseReadReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if !h.armed.Load() || !readNewEntries(cmds) || !h.armed.CompareAndSwap(true, false) {
			return err
		}
		if h.during != nil {
			h.during()
		}
		if h.resend {
			return next(ctx, cmds)
		}
		for _, c := range cmds {
			c.SetErr(io.ErrUnexpectedEOF)
		}
		return io.ErrUnexpectedEOF
	}
}

// readNewEntries reports whether cmds hold an XREADGROUP ">" that returned entries.
func readNewEntries(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		x, ok := c.(*redis.XStreamSliceCmd)
		if !ok || !slices.Contains(x.Args(), any(">")) {
			continue
		}
		for _, s := range x.Val() {
			if len(s.Messages) > 0 {
				return true
			}
		}
	}
	return false
}

// forEachLoss runs test for both ways a read reply is lost: go-redis sends the read again
// (resend), or the read fails as if its retries ran out.
func forEachLoss(t *testing.T, test func(t *testing.T, resend bool)) {
	t.Run("go-redis sends the read again", func(t *testing.T) { test(t, true) })
	t.Run("the read fails", func(t *testing.T) { test(t, false) })
}

// TestLostReadReplyIsRecoveredInOrder: entries whose read reply was lost are delivered by
// the next read round, before anything newer of their partition, not a pending scan later.
func TestLostReadReplyIsRecoveredInOrder(t *testing.T) {
	t.Parallel()
	forEachLoss(t, func(t *testing.T, resend bool) {
		_, client := streamqtest.StartRedis(t)
		hook := &loseReadReply{resend: resend}
		client.AddHook(hook)
		const topic = "lost-reply"
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
		streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
		_, ch := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, func(c *streamq.SubscriberConfig) {
			c.Reclaim.ScanInterval = time.Hour // only the read round may find the lost entries
			c.Read.BatchCount = 4              // more lost entries than one re-read returns
		})
		require.Equal(t, 0, streamqtest.SeqOf(streamqtest.AckNext(t, ch)))

		hook.armed.Store(true)
		streamqtest.PublishKeyed(t, pub, topic, 1, 11, 1) // the lost reply carries the first of these
		var got []int
		for len(got) < 10 {
			m := streamqtest.ReceiveOne(t, ch, 10*time.Second)
			m.Ack()
			got = append(got, streamqtest.SeqOf(m))
		}
		require.False(t, hook.armed.Load(), "a read reply was lost")
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, got)
		select {
		case m := <-ch:
			t.Fatalf("delivered again: seq %d", streamqtest.SeqOf(m))
		default:
		}
	})
}

// TestStaleOwnersLateReadIsClaimedInOrder: a read of the partition's previous owner that
// Redis runs after the takeover (sent before its lease lapsed, held up on the network)
// leaves entries pending for that owner. The new owner claims them before anything newer.
func TestStaleOwnersLateReadIsClaimedInOrder(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "late-read"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
	_, ch := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, func(c *streamq.SubscriberConfig) {
		c.Reclaim.ScanInterval = time.Hour // only the read round may find them
	})
	require.Equal(t, 0, streamqtest.SeqOf(streamqtest.AckNext(t, ch)))

	// The stale owner's late read: seq 1 and 2 appended and read for "old" at once, while
	// a's read round is blocked waiting for new entries.
	staleRead(t, client, topic, 1, 2)
	streamqtest.PublishKeyed(t, pub, topic, 3, 7, 1) // wakes a's blocked read with seq 3

	var got []int
	for len(got) < 6 {
		m := streamqtest.ReceiveOne(t, ch, 10*time.Second)
		m.Ack()
		got = append(got, streamqtest.SeqOf(m))
	}
	require.Equal(t, []int{1, 2, 3, 4, 5, 6}, got)
}

// staleRead appends seq from..to of key-0 to partition 0 and reads them for consumer "old"
// at once: the late read of a previous owner, run by Redis after the takeover.
func staleRead(t *testing.T, client redis.UniversalClient, topic string, from, to int) {
	t.Helper()
	ctx := context.Background()
	stream := keys.New("", "").PartitionStream(topic, 0)
	_, err := client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for seq := from; seq <= to; seq++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("late"))
			m.Metadata.Set(streamq.PartitionKeyMetadata, "key-0")
			m.Metadata.Set("seq", strconv.Itoa(seq))
			fields, err := streamq.DefaultMarshaler{}.Marshal(topic, m)
			require.NoError(t, err)
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: fields})
		}
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "old", Streams: []string{stream, ">"}, Count: int64(to - from + 1), Block: -1})
		return nil
	})
	require.NoError(t, err)
}

// TestLostReplyAndStaleReadAtOnceStayInOrder: the owner's read reply carrying seq 1 is lost
// and, at that moment, a stale owner's late read takes seq 2 and 3. The owner claims the
// strays, and its own lost entry still comes first: 1, 2, 3, then the rest, each once,
// without the pending scan.
func TestLostReplyAndStaleReadAtOnceStayInOrder(t *testing.T) {
	t.Parallel()
	forEachLoss(t, func(t *testing.T, resend bool) {
		_, client := streamqtest.StartRedis(t)
		const topic = "lost-and-late"
		hook := &loseReadReply{resend: resend}
		lateRead := make(chan struct{})
		hook.during = func() {
			staleRead(t, client, topic, 2, 3)
			close(lateRead)
		}
		client.AddHook(hook)
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
		streamqtest.PublishKeyed(t, pub, topic, 0, 1, 1)
		_, ch := streamqtest.SubscribeMember(t, client, topic, "g", "a", 1, func(c *streamq.SubscriberConfig) {
			c.Reclaim.ScanInterval = time.Hour // only the read rounds may find them
		})
		require.Equal(t, 0, streamqtest.SeqOf(streamqtest.AckNext(t, ch)))

		hook.armed.Store(true)
		streamqtest.PublishKeyed(t, pub, topic, 1, 2, 1) // the lost reply carries seq 1
		select {
		case <-lateRead:
		case <-time.After(10 * time.Second):
			t.Fatal("no read reply was lost")
		}
		streamqtest.PublishKeyed(t, pub, topic, 4, 8, 1) // after the late read in the stream
		var got []int
		for len(got) < 7 {
			m := streamqtest.ReceiveOne(t, ch, 10*time.Second)
			m.Ack()
			got = append(got, streamqtest.SeqOf(m))
		}
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7}, got)
		select {
		case m := <-ch:
			t.Fatalf("delivered again: seq %d", streamqtest.SeqOf(m))
		default:
		}
	})
}
