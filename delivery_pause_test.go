package streamq_test

import (
	"context"
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
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// keyOrder records, per key, the seqs received, and counts messages.
type keyOrder struct {
	mu   sync.Mutex
	seqs map[string][]int
	n    int
}

func (k *keyOrder) add(m *message.Message) {
	seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seqs == nil {
		k.seqs = map[string][]int{}
	}
	k.seqs[m.Metadata.Get("key")] = append(k.seqs[m.Metadata.Get("key")], seq)
	k.n++
}

func (k *keyOrder) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// TestPauseKeepsLeasesAndResumesInOrder pauses a member that owns 4 partitions: nothing is
// delivered while it is paused (what is published meanwhile waits), it keeps every lease,
// and Resume delivers everything, in order per key.
func TestPauseKeepsLeasesAndResumesInOrder(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const topic, group, parts, keys = "paused", "workers", 4, 16
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: parts})
		sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, group))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch, err := sub.Subscribe(ctx, topic)
		require.NoError(t, err)
		got := &keyOrder{}
		go func() {
			for m := range ch {
				got.add(m)
				m.Ack()
			}
		}()
		require.NoError(t, pub.Publish(topic, streamqtest.KeyedMessages(0, 40, keys)...))
		require.Eventually(t, func() bool { return got.count() == 40 }, 10*time.Second, 10*time.Millisecond)

		sub.Pause()
		assert.True(t, sub.Paused())
		require.Eventually(t, func() bool { return sub.InFlight() == 0 }, 5*time.Second, 10*time.Millisecond)
		require.NoError(t, pub.Publish(topic, streamqtest.KeyedMessages(40, 200, keys)...))
		owners := streamqtest.LeaseOwners(t, client, topic, group, parts)
		time.Sleep(20 * streamqtest.FastSub(client, group).Read.BlockTime) // a window in which a delivery would show
		assert.Equal(t, 40, got.count(), "delivered while paused")
		assert.Equal(t, owners, streamqtest.LeaseOwners(t, client, topic, group, parts), "the leases moved while paused")
		for p, o := range owners {
			assert.Equal(t, streamq.SubscriberConfigOf(sub).Membership.ConsumerName, o, "partition %d is not the paused member's", p)
		}

		sub.Resume()
		assert.False(t, sub.Paused())
		require.Eventually(t, func() bool { return got.count() == 240 }, 10*time.Second, 10*time.Millisecond)
		got.mu.Lock()
		defer got.mu.Unlock()
		for k, seqs := range got.seqs {
			for i, s := range seqs {
				require.Equal(t, i, s, "key %s out of order: %v", k, seqs)
			}
		}
	})
}

// TestPauseLetsInFlightFinish pauses while a handler holds a message: the handler's ack is
// applied, nothing else comes, and Resume goes on with the next one.
func TestPauseLetsInFlightFinish(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	const topic = "paused-inflight"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	require.NoError(t, pub.Publish(topic, seqMessages(0, 3, nil)...))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	first := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, 1, sub.InFlight())
	sub.Pause()
	first.Ack()
	require.Eventually(t, func() bool { return sub.InFlight() == 0 }, 5*time.Second, 10*time.Millisecond)
	select {
	case m := <-ch:
		t.Fatalf("delivered %s while paused", m.Metadata.Get("seq"))
	case <-time.After(20 * streamqtest.FastSub(client, "g").Read.BlockTime):
	}
	sub.Resume()
	assert.Equal(t, "1", nextMsg(t, ch, 10*time.Second).Metadata.Get("seq"))
}

// pauseMetrics records what a PauseReporter is told.
type pauseMetrics struct {
	streamq.NoopMetrics
	mu    sync.Mutex
	since []time.Time
}

func (p *pauseMetrics) Paused(_ streamq.Labels, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since = append(p.since, since)
}

func (p *pauseMetrics) last() (time.Time, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.since) == 0 {
		return time.Time{}, 0
	}
	return p.since[len(p.since)-1], len(p.since)
}

// TestGroupPauseFromOutside pauses the group through its pause key (what admin.PauseGroup
// writes): the member stops within RebalanceInterval and tells its PauseReporter since when;
// a local Resume does not lift a group's pause; removing the key resumes it.
func TestGroupPauseFromOutside(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) { groupPauseFromOutside(t, client) })
}

func groupPauseFromOutside(t *testing.T, client redis.UniversalClient) {
	const topic, group = "group-paused", "workers"
	metrics := &pauseMetrics{}
	cfg := streamqtest.FastSub(client, group)
	cfg.Metrics = metrics
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
	sub := streamqtest.NewSubscriber(t, cfg)
	require.NoError(t, pub.Publish(topic, seqMessages(0, 1, nil)...))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	nextMsg(t, ch, 10*time.Second).Ack()

	reg := partition.NewRegistry(client, keys.New("", ""))
	pausedAt := time.UnixMilli(time.Now().UnixMilli())
	_, err = reg.PauseGroup(context.Background(), reg.PauseKey(topic, group, false), pausedAt)
	require.NoError(t, err)
	require.Eventually(t, func() bool { s, _ := metrics.last(); return s.Equal(pausedAt) }, 5*time.Second, 10*time.Millisecond)
	sub.Resume() // not paused locally: nothing to resume, the group stays paused
	require.NoError(t, pub.Publish(topic, seqMessages(1, 5, nil)...))
	select {
	case m := <-ch:
		t.Fatalf("delivered %s while the group was paused", m.Metadata.Get("seq"))
	case <-time.After(20 * cfg.Read.BlockTime):
	}
	_, err = reg.ResumeGroup(context.Background(), reg.PauseKey(topic, group, false))
	require.NoError(t, err)
	for range 5 {
		nextMsg(t, ch, 10*time.Second).Ack()
	}
	// The resume is reported as the gate opens: a delivery may come first.
	require.Eventually(t, func() bool { s, n := metrics.last(); return s.IsZero() && n == 2 }, 5*time.Second, 10*time.Millisecond,
		"resumed: the zero time, reported once")
}
