package streamqtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	"github.com/streamq-dev/streamq/internal/member"
)

// Received is what a test consumer saw: one row per delivery.
type Received struct {
	Member    string
	Partition int
	Key       string
	Seq       int
	Count     int64
}

// Recorder collects deliveries from several subscriptions.
type Recorder struct {
	mu   sync.Mutex
	rows []Received
	seen map[string]bool
	got  chan struct{}
}

// NewRecorder is an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{seen: map[string]bool{}, got: make(chan struct{}, 1<<16)}
}

// Add records one delivery of msg (its member, partition, key, seq and delivery count).
func (r *Recorder) Add(msg *message.Message) {
	ctx := msg.Context()
	member, _ := streamq.ConsumerFromCtx(ctx)
	part, _ := streamq.PartitionFromCtx(ctx)
	count, _ := streamq.DeliveryCountFromCtx(ctx)
	seq, _ := strconv.Atoi(msg.Metadata.Get("seq"))
	r.mu.Lock()
	r.rows = append(r.rows, Received{member, part, msg.Metadata.Get(streamq.PartitionKeyMetadata), seq, count})
	first := !r.seen[msg.UUID]
	r.seen[msg.UUID] = true
	r.mu.Unlock()
	if first {
		r.got <- struct{}{}
	}
}

// Snapshot copies the deliveries recorded so far, in the order they were recorded.
func (r *Recorder) Snapshot() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.rows...)
}

// WaitUnique waits until n distinct messages were recorded.
func (r *Recorder) WaitUnique(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-r.got:
		case <-deadline.C:
			t.Fatalf("received %d of %d distinct messages within %s", i, n, timeout)
		}
	}
}

// ConsumeInto acks every message of ch into r until ch closes.
func ConsumeInto(ch <-chan *message.Message, r *Recorder) {
	go func() {
		for msg := range ch {
			r.Add(msg)
			msg.Ack()
		}
	}()
}

// SubscribeMember subscribes member name of group to topic (partitions the count it states,
// FastSub's intervals, changed by tweak unless nil); the Subscriber closes when the test ends.
func SubscribeMember(t *testing.T, client redis.UniversalClient, topic, group, name string, partitions int, tweak func(*streamq.SubscriberConfig)) (*streamq.Subscriber, <-chan *message.Message) {
	t.Helper()
	cfg := FastSub(client, group)
	cfg.Membership.ConsumerName = name
	cfg.DefaultPartitionCount = partitions
	if tweak != nil {
		tweak(&cfg)
	}
	sub := NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	return sub, ch
}

// PublishKeyed publishes messages from..to-1 to topic in one call, message i with key
// "key-<i%keys>" and metadata seq i.
func PublishKeyed(t *testing.T, pub *streamq.Publisher, topic string, from, to, keys int) {
	t.Helper()
	var msgs []*message.Message
	for i := from; i < to; i++ {
		m := message.NewMessage(watermill.NewUUID(), []byte(fmt.Sprintf("m%d", i)))
		m.Metadata.Set(streamq.PartitionKeyMetadata, fmt.Sprintf("key-%d", i%keys))
		m.Metadata.Set("seq", strconv.Itoa(i))
		msgs = append(msgs, m)
	}
	require.NoError(t, pub.Publish(topic, msgs...))
}

// LeaseOwners reads the member holding each partition's lease ("" when free).
func LeaseOwners(t *testing.T, client redis.UniversalClient, topic, group string, n int) []string {
	t.Helper()
	space := keys.New("", "")
	out := make([]string, n)
	for p := 0; p < n; p++ {
		v, err := client.Get(context.Background(), space.Lease(topic, p, group)).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		require.NoError(t, err)
		out[p] = member.TokenMember(v)
	}
	return out
}

// CountByMember counts the partitions each member owns ("" for free ones).
func CountByMember(owners []string) map[string]int {
	c := map[string]int{}
	for _, o := range owners {
		c[o]++
	}
	return c
}

// Balanced is true of owner counts with no free partition and want[m] partitions for each m.
func Balanced(want map[string]int) func(map[string]int) bool {
	return func(got map[string]int) bool {
		if got[""] > 0 {
			return false
		}
		for m, n := range want {
			if got[m] != n {
				return false
			}
		}
		return true
	}
}

// WaitOwners waits (20 s at most) until the lease owners of the n partitions satisfy ok, and
// returns them.
func WaitOwners(t *testing.T, client redis.UniversalClient, topic, group string, n int, ok func(map[string]int) bool) []string {
	t.Helper()
	var owners []string
	if !assert.Eventually(t, func() bool {
		owners = LeaseOwners(t, client, topic, group, n)
		return ok(CountByMember(owners))
	}, 20*time.Second, 50*time.Millisecond) {
		require.FailNow(t, "owners never converged", "last seen: %v", CountByMember(owners))
	}
	return owners
}
