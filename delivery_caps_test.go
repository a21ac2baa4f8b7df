package streamq_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// concurrency counts the handlers running at once and the most seen. Handlers wait at the
// gate until the most reached want, and a little longer (hold): a cap that holds is reached,
// and one that does not is passed while the first handlers are still waiting. The pass does
// not depend on the hold: a cap that holds gives want whatever the timing.
type concurrency struct {
	now, most atomic.Int64
	want      int64
	gate      chan struct{}
	open      sync.Once
}

func newConcurrency(want int) *concurrency {
	return &concurrency{want: int64(want), gate: make(chan struct{})}
}

// handle is the slow handler: in, wait for the gate (or a generous bound, so a cap that is
// never reached fails the assertion instead of hanging), out.
func (c *concurrency) handle(msg *message.Message) {
	n := c.now.Add(1)
	for m := c.most.Load(); n > m; m = c.most.Load() {
		if c.most.CompareAndSwap(m, n) {
			break
		}
	}
	if n >= c.want {
		c.open.Do(func() { time.AfterFunc(200*time.Millisecond, func() { close(c.gate) }) })
	}
	select {
	case <-c.gate:
	case <-time.After(10 * time.Second):
	}
	c.now.Add(-1)
	msg.Ack()
}

// publishTo publishes perPartition messages to each of partitions partitions of topic.
func publishTo(t *testing.T, pub *streamq.Publisher, topic string, partitions, perPartition int) {
	t.Helper()
	var msgs []*message.Message
	for p := 0; p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("x"))
			m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
			msgs = append(msgs, m)
		}
	}
	require.NoError(t, pub.Publish(topic, msgs...))
}

// TestInFlightCaps: MaxInFlight holds over every partition and topic of a Subscriber, and
// MaxInFlightPerPartition lets that many messages of one partition be handled at once; a
// slow handler reaches each cap and never passes it.
func TestInFlightCaps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		topics, partitions        int // each topic has partitions partitions
		maxInFlight, perPartition int
		want                      int64 // most handlers at once
	}{
		{name: "MaxInFlight 3 over 8 partitions", topics: 1, partitions: 8, maxInFlight: 3, perPartition: 1, want: 3},
		{name: "MaxInFlight 3 over two topics of 4 partitions", topics: 2, partitions: 4, maxInFlight: 3, perPartition: 1, want: 3},
		{name: "MaxInFlightPerPartition 4 on one partition", topics: 1, partitions: 1, perPartition: 4, want: 4},
		{name: "MaxInFlight 3 below MaxInFlightPerPartition 4", topics: 1, partitions: 1, maxInFlight: 3, perPartition: 4, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, client := streamqtest.StartRedis(t)
			cfg := streamqtest.FastSub(client, "g")
			cfg.DefaultPartitionCount = tt.partitions
			cfg.Delivery.MaxInFlight, cfg.Delivery.MaxInFlightPerPartition = tt.maxInFlight, tt.perPartition
			sub := streamqtest.NewSubscriber(t, cfg)
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: tt.partitions})
			c := newConcurrency(int(tt.want))
			var handled sync.WaitGroup
			const perPartition = 12
			for i := 0; i < tt.topics; i++ {
				topic := fmt.Sprintf("caps-%d", i)
				publishTo(t, pub, topic, tt.partitions, perPartition)
				handled.Add(tt.partitions * perPartition)
				ch, err := sub.Subscribe(context.Background(), topic)
				require.NoError(t, err)
				go func() {
					for msg := range ch {
						go func() { defer handled.Done(); c.handle(msg) }() // as the Router does
					}
				}()
			}
			waitGroup(t, &handled, 30*time.Second)
			assert.Equal(t, tt.want, c.most.Load(), "most handlers at once")
		})
	}
}

// TestMaxLeasedPartitionsHoldsOverTopics: a Subscriber capped at 3 leases, subscribed to two
// topics of 4 partitions, never holds more than 3 leases in all; a second member without a
// cap takes the rest of both topics.
func TestMaxLeasedPartitionsHoldsOverTopics(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	topics := []string{"leased-a", "leased-b"}
	capped := streamqtest.FastSub(client, "g")
	capped.Membership.ConsumerName, capped.DefaultPartitionCount, capped.Membership.MaxLeasedPartitions = "capped", 4, 3
	free := streamqtest.FastSub(client, "g")
	free.Membership.ConsumerName, free.DefaultPartitionCount = "free", 4
	for _, cfg := range []streamq.SubscriberConfig{capped, free} {
		sub := streamqtest.NewSubscriber(t, cfg)
		for _, topic := range topics {
			ch, err := sub.Subscribe(context.Background(), topic)
			require.NoError(t, err)
			go func() {
				for msg := range ch {
					msg.Ack()
				}
			}()
		}
	}
	var held map[string]int
	most := 0 // the most leases the capped Subscriber was seen holding
	assert.Eventually(t, func() bool {
		held = map[string]int{}
		for _, topic := range topics {
			for _, o := range streamqtest.LeaseOwners(t, client, topic, "g", 4) {
				held[o]++
			}
		}
		most = max(most, held["capped"])
		return held["capped"] == 3 && held["free"] == 5
	}, 20*time.Second, 20*time.Millisecond, "leases never settled")
	assert.Equal(t, map[string]int{"capped": 3, "free": 5}, held, "leases over both topics")
	assert.Equal(t, 3, most, "most leases of the capped Subscriber over both topics")
}

// TestTopicOptionsThroughRouter: two topics on one Subscriber, read by one Router, each with
// its own batch count and partition filter. The filter shows in the partitions the member
// leases; the batch count in what one read took: while the handler holds a topic's first
// message, the member has exactly BatchCount entries of that partition pending.
func TestTopicOptionsThroughRouter(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		const partitions, published = 4, 20
		topics := []struct {
			name      string
			opts      streamq.ReadConfig
			partition int    // where the messages go: one the filter leaves to the member
			leased    []bool // by partition
		}{
			{name: "opts-even", opts: streamq.ReadConfig{BatchCount: 3, PartitionModulo: 2}, partition: 2, leased: []bool{true, false, true, false}},
			{name: "opts-odd", opts: streamq.ReadConfig{BatchCount: 7, PartitionModulo: 2, PartitionRemainder: 1}, partition: 1, leased: []bool{false, true, false, true}},
		}
		cfg := streamqtest.FastSub(client, "g")
		cfg.Membership.ConsumerName, cfg.DefaultPartitionCount = "member", partitions
		cfg.Topics = map[string]streamq.ReadConfig{}
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
		for _, tp := range topics {
			cfg.Topics[tp.name] = tp.opts
			var msgs []*message.Message
			for i := 0; i < published; i++ {
				m := message.NewMessage(watermill.NewUUID(), []byte("x"))
				m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(tp.partition))
				msgs = append(msgs, m)
			}
			require.NoError(t, pub.Publish(tp.name, msgs...))
		}
		sub := streamqtest.NewSubscriber(t, cfg)
		release := make(chan struct{})
		var handled atomic.Int64
		r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 5 * time.Second}, streamqtest.Logger())
		require.NoError(t, err)
		for _, tp := range topics {
			r.AddConsumerHandler("handler-"+tp.name, tp.name, sub, func(*message.Message) error {
				<-release
				handled.Add(1)
				return nil
			})
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		t.Cleanup(func() {
			assert.NoError(t, r.Close())
			assert.NoError(t, <-done)
		})

		space := keys.New("", "")
		for _, tp := range topics {
			t.Run(tp.name, func(t *testing.T) {
				owners := streamqtest.WaitOwners(t, client, tp.name, "g", partitions, func(c map[string]int) bool { return c["member"] == 2 })
				for p, want := range tp.leased {
					assert.Equal(t, want, owners[p] == "member", "partition %d leased", p)
				}
				str := space.PartitionStream(tp.name, tp.partition)
				pending := func() int64 {
					s, err := client.XPending(context.Background(), str, "g").Result()
					require.NoError(t, err)
					return s.Count
				}
				require.Eventually(t, func() bool { return pending() == int64(tp.opts.BatchCount) }, 10*time.Second, 10*time.Millisecond,
					"pending entries of partition %d", tp.partition)
				assert.Equal(t, int64(tp.opts.BatchCount), pending(), "one read of BatchCount entries, no more while the handler holds the first")
			})
		}
		close(release)
		require.Eventually(t, func() bool { return handled.Load() >= int64(len(topics)*published) }, 20*time.Second, 10*time.Millisecond,
			"every message handled")
	})
}

// waitGroup waits for wg, failing the test after timeout.
func waitGroup(t *testing.T, wg *sync.WaitGroup, timeout time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("not done within %s", timeout)
	}
}

// waitMetrics counts the BackpressureWait observations.
type waitMetrics struct {
	streamq.NoopMetrics
	waits atomic.Int64
}

func (m *waitMetrics) BackpressureWait(streamq.Labels, time.Duration) { m.waits.Add(1) }

// TestBackpressureWaitTimesEverySlot: a message that waits for a slot is timed once, whether
// the slot it waits for is its partition's (MaxInFlightPerPartition) or the Subscriber's
// (MaxInFlight). Each case has exactly one message that finds the slots taken.
func TestBackpressureWaitTimesEverySlot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		partitions, messages      int // messages per partition
		maxInFlight, perPartition int
		want                      int64 // waits timed
	}{
		{name: "the Subscriber's slot", partitions: 2, messages: 1, maxInFlight: 1, perPartition: 1, want: 1},
		{name: "the partition's slot", partitions: 1, messages: 3, perPartition: 2, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, client := streamqtest.StartRedis(t)
			m := &waitMetrics{}
			cfg := streamqtest.FastSub(client, "g")
			cfg.DefaultPartitionCount, cfg.Metrics = tt.partitions, m
			cfg.Delivery.MaxInFlight, cfg.Delivery.MaxInFlightPerPartition = tt.maxInFlight, tt.perPartition
			sub := streamqtest.NewSubscriber(t, cfg)
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: tt.partitions})
			publishTo(t, pub, "waits", tt.partitions, tt.messages)
			most := tt.perPartition * tt.partitions
			if tt.maxInFlight > 0 {
				most = min(most, tt.maxInFlight)
			}
			c := newConcurrency(most)
			var handled sync.WaitGroup
			handled.Add(tt.partitions * tt.messages)
			ch, err := sub.Subscribe(context.Background(), "waits")
			require.NoError(t, err)
			go func() {
				for msg := range ch {
					go func() { defer handled.Done(); c.handle(msg) }()
				}
			}()
			waitGroup(t, &handled, 30*time.Second)
			assert.Equal(t, tt.want, m.waits.Load(), "waits for a slot timed")
		})
	}
}
