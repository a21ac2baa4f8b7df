package streamq_test

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// deferredSub is a subscriber whose pending scan runs often and claims soon, so a scan that
// took deferred entries from their live owner would show.
func deferredSub(client redis.UniversalClient) streamq.SubscriberConfig {
	cfg := streamqtest.FastSub(client, "deferring")
	cfg.Reclaim.ScanInterval = 100 * time.Millisecond
	cfg.Reclaim.Idle = 200 * time.Millisecond
	return cfg
}

// TestDeferredAcksSettleLater defers 10 messages in the handler and acks them later from
// another goroutine: the partition moves on meanwhile, the pending scan does not deliver
// them again, and each is acked once.
func TestDeferredAcksSettleLater(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const topic = "deferred"
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
		require.NoError(t, pub.Publish(topic, seqMessages(0, 10, nil)...))
		sub := streamqtest.NewSubscriber(t, deferredSub(client))
		ch, err := sub.Subscribe(context.Background(), topic)
		require.NoError(t, err)
		var handles []*streamq.DeferredAck
		for range 10 { // nothing acked yet: the partition still moves on
			m := nextMsg(t, ch, 10*time.Second)
			d, err := streamq.DeferAck(m)
			require.NoError(t, err)
			handles = append(handles, d)
			m.Ack()
		}
		time.Sleep(5 * deferredSub(client).Reclaim.Idle) // pending scans would take and deliver them again
		select {
		case m := <-ch:
			t.Fatalf("delivered %s again while deferred", m.Metadata.Get("seq"))
		default:
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, d := range handles {
				assert.NoError(t, d.Ack())
				assert.NoError(t, d.Ack(), "a second Ack does nothing")
			}
		}()
		wg.Wait()
		stream := keys.New("", "").PartitionStream(topic, 0)
		require.Eventually(t, func() bool {
			p, err := client.XPending(context.Background(), stream, "deferring").Result()
			return err == nil && p.Count == 0
		}, 10*time.Second, 10*time.Millisecond)
		assert.Equal(t, int64(10), sub.Stats().Delivered, "delivered once each")
		assert.Equal(t, int64(10), sub.Stats().Acked)
	})
}

// TestDeferredUnackedGoToTheNextOwner defers 4 of 10 messages and never acks them: when
// the member closes, the next owner delivers exactly those, and the old handles say the
// lease is gone.
func TestDeferredUnackedGoToTheNextOwner(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const topic = "deferred-handover"
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
		require.NoError(t, pub.Publish(topic, seqMessages(0, 10, nil)...))
		first, err := streamq.NewSubscriber(deferredSub(client), streamqtest.Logger())
		require.NoError(t, err)
		ch, err := first.Subscribe(context.Background(), topic)
		require.NoError(t, err)
		deferSeq := map[string]bool{"2": true, "5": true, "7": true, "9": true}
		var handles []*streamq.DeferredAck
		for range 10 {
			m := nextMsg(t, ch, 10*time.Second)
			if deferSeq[m.Metadata.Get("seq")] {
				d, err := streamq.DeferAck(m)
				require.NoError(t, err)
				handles = append(handles, d)
			}
			m.Ack()
		}
		require.NoError(t, first.Close())
		for _, d := range handles {
			assert.ErrorIs(t, d.Ack(), streamq.ErrLeaseLost)
		}

		next := streamqtest.NewSubscriber(t, deferredSub(client))
		ch, err = next.Subscribe(context.Background(), topic)
		require.NoError(t, err)
		var got []int
		for range 4 {
			m := nextMsg(t, ch, 10*time.Second)
			n, _ := strconv.Atoi(m.Metadata.Get("seq"))
			got = append(got, n)
			m.Ack()
		}
		sort.Ints(got)
		assert.Equal(t, []int{2, 5, 7, 9}, got)
		select {
		case m := <-ch:
			t.Fatalf("the next owner delivered %s too", m.Metadata.Get("seq"))
		case <-time.After(10 * deferredSub(client).Read.BlockTime):
		}
	})
}

// TestDeferAckNeedsADelivery refuses a message no Subscriber delivered, and a deferred
// message nacked later is retried.
func TestDeferAckNeedsADelivery(t *testing.T) {
	t.Parallel()
	_, err := streamq.DeferAck(message.NewMessage("x", nil))
	assert.ErrorIs(t, err, streamq.ErrNotDelivered)

	_, client := streamqtest.StartRedis(t)
	const topic = "deferred-nack"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	require.NoError(t, pub.Publish(topic, seqMessages(0, 1, nil)...))
	sub := streamqtest.NewSubscriber(t, deferredSub(client))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	m := nextMsg(t, ch, 10*time.Second)
	d, err := streamq.DeferAck(m)
	require.NoError(t, err)
	m.Ack()
	require.NoError(t, d.Nack())
	again := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, "0", again.Metadata.Get("seq"))
	assert.Equal(t, "1", again.Metadata.Get(streamq.RetryCountMetadata), "a retry")
	again.Ack()
}
