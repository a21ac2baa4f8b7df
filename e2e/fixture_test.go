package e2e

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/member"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/retention"
)

// env is a redis-server with an Admin and a Publisher.
type env struct {
	t      *testing.T
	ctx    context.Context
	client *redis.Client
	adm    *admin.Admin
	pub    *streamq.Publisher
}

func newEnv(t *testing.T) *env {
	t.Helper()
	client := redistest.Start(t).Client(t)
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return &env{t: t, ctx: context.Background(), client: client, adm: adm, pub: pub}
}

// with returns the env for subtest t: what it starts ends with the subtest.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// serve starts a dashboard over the env's Redis and returns its URL.
func (e *env) serve(opts dashboard.Options) string {
	e.t.Helper()
	h, err := dashboard.New(e.client, opts)
	require.NoError(e.t, err)
	srv := httptest.NewServer(h)
	e.t.Cleanup(func() {
		srv.Close()
		require.NoError(e.t, h.Close())
	})
	return srv.URL
}

// subscriberConfig is a quick member of group.
func subscriberConfig(client redis.UniversalClient, group string) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, Membership: streamq.MembershipConfig{ConsumerName: group + "-member-1", LeaseTTL: 3 * time.Second, RenewInterval: 500 * time.Millisecond, RebalanceInterval: 200 * time.Millisecond},

		Read: streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Delivery: streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: 1}, MoverInterval: 100 * time.Millisecond},
	}
}

// consume runs a member of group on topic that passes every message to handle (which acks
// or nacks it) until the test ends.
func (e *env) consume(topic, group string, handle func(*message.Message)) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	sub, err := streamq.NewSubscriber(subscriberConfig(e.client, group), watermill.NopLogger{})
	require.NoError(t, err)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			handle(m)
		}
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, sub.Close())
		wg.Wait()
	})
}

// traffic publishes keyed messages to topic every 50 ms, in a slow wave between about 40 and
// 200 messages a second, until stop is called; stop returns how many were published.
func (e *env) traffic(topic string) (stop func() int) {
	t := e.t
	done, finished := make(chan struct{}), make(chan int, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		sent := 0
		for i := 0; ; i++ {
			select {
			case <-done:
				finished <- sent
				return
			case <-tick.C:
			}
			msgs := trafficBatch(i)
			if err := e.pub.Publish(topic, msgs...); err != nil {
				t.Errorf("publish: %v", err)
			}
			sent += len(msgs)
		}
	}()
	var once sync.Once
	n := 0
	return func() int {
		once.Do(func() {
			close(done)
			n = <-finished
		})
		return n
	}
}

// trafficBatch is tick i's batch: 2 to 10 orders of 40 customers.
func trafficBatch(i int) []*message.Message {
	n := 6 + int(math.Round(4*math.Sin(float64(i)/12)))
	msgs := make([]*message.Message, n)
	for j := range msgs {
		order := i*10 + j
		msgs[j] = message.NewMessage(watermill.NewUUID(), []byte(`{"order":`+strconv.Itoa(order)+`,"amount":`+strconv.Itoa(order%97*3)+`}`))
		msgs[j].Metadata.Set(streamq.PartitionKeyMetadata, "customer-"+strconv.Itoa(order%40))
	}
	return msgs
}

// Metadata of the messages the "workers" handler dead-letters.
const deadKey = "dead-reason"

// arrival is a replayed message as the "workers" group received it.
type arrival struct {
	partition    int
	uuid         string
	replayedFrom string
}

// deadLetters runs group "workers" on topic: it dead-letters messages carrying deadKey (with
// that reason) and reports replayed ones on the returned channel.
func (e *env) deadLetters(topic string) <-chan arrival {
	arrivals := make(chan arrival, 16)
	e.consume(topic, "workers", func(m *message.Message) {
		if from := m.Metadata.Get(streamq.ReplayedFromMetadata); from != "" {
			p, _ := streamq.PartitionFromCtx(m.Context())
			arrivals <- arrival{partition: p, uuid: m.UUID, replayedFrom: from}
			m.Ack()
			return
		}
		if reason := m.Metadata.Get(deadKey); reason != "" {
			_ = streamq.DeadLetter(m, errors.New(reason))
			m.Nack()
			return
		}
		m.Ack()
	})
	return arrivals
}

// groupLags is each partition's lag of group, from admin.
func (e *env) groupLags(topic, group string) []int64 {
	e.t.Helper()
	st, err := e.adm.GroupStats(e.ctx, topic, group)
	require.NoError(e.t, err)
	out := make([]int64, len(st.Partitions))
	for i, p := range st.Partitions {
		out[i] = p.Lag
	}
	return out
}

// ids returns the entry ids of partition p of topic.
func (e *env) ids(topic string, p int) []string {
	e.t.Helper()
	entries, err := e.adm.Range(e.ctx, topic, p, "", "", 1000)
	require.NoError(e.t, err)
	out := make([]string, len(entries))
	for i, en := range entries {
		out[i] = en.ID
	}
	return out
}

// crashedHost and crashedPID are the process a crashed member ran in.
const (
	crashedHost = "web-3"
	crashedPID  = 4121
)

// crashed leaves in Redis what a member of group on topic that crashed ago before now leaves
// behind: its expired heartbeat in the group's membership, the group's last beat (its last
// heartbeat, in crashedHost's process crashedPID), and the partitions' record of when the
// group was last seen live there.
func (e *env) crashed(topic, group, name string, ago time.Duration) {
	e.t.Helper()
	now, err := e.client.Time(e.ctx).Result()
	require.NoError(e.t, err)
	gone := now.Add(-ago)
	space := keys.New("", "")
	require.NoError(e.t, e.client.ZAdd(e.ctx, space.Members(topic, group), redis.Z{Member: name, Score: float64(gone.UnixMilli())}).Err())
	beats, field := member.BeatsKey(space.Members(topic, group))
	beat := member.EncodeBeat(member.Beat{Member: name, Host: crashedHost, PID: crashedPID, At: gone})
	require.NoError(e.t, e.client.HSet(e.ctx, beats, field, beat).Err())
	q, err := e.adm.QueueInfo(e.ctx, topic)
	require.NoError(e.t, err)
	for _, p := range q.PerPartition {
		_, err := retention.MarkSeen(e.ctx, e.client, p.Stream, group, gone)
		require.NoError(e.t, err)
	}
}
