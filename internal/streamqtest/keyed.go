package streamqtest

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// KeyedPublish publishes n messages over keys keys to topic (one partition), seq per key in
// metadata "seq", in calls of 100.
func KeyedPublish(t testing.TB, client redis.UniversalClient, topic string, keys, n int) {
	t.Helper()
	pub := NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	seq := make([]int, keys)
	for from := 0; from < n; from += 100 {
		var msgs []*message.Message
		for i := from; i < min(from+100, n); i++ {
			k := i % keys
			m := message.NewMessage(watermill.NewUUID(), []byte("x"))
			m.Metadata.Set(streamq.PartitionKeyMetadata, "k"+strconv.Itoa(k))
			m.Metadata.Set("seq", strconv.Itoa(seq[k]))
			seq[k]++
			msgs = append(msgs, m)
		}
		require.NoError(t, pub.Publish(topic, msgs...))
	}
}

// KeyedHandled is what handlers saw: per key the seqs handed over in order, per UUID how
// often, and the most handlers at once.
type KeyedHandled struct {
	Mu      sync.Mutex
	ByKey   map[string][]int
	Count   map[string]int
	Running atomic.Int64
	Most    atomic.Int64
}

// NewKeyedHandled is an empty KeyedHandled.
func NewKeyedHandled() *KeyedHandled {
	return &KeyedHandled{ByKey: map[string][]int{}, Count: map[string]int{}}
}

// See records m's delivery and returns its key's seq and how often it was delivered.
func (h *KeyedHandled) See(m *message.Message) int {
	seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
	h.Mu.Lock()
	defer h.Mu.Unlock()
	k := m.Metadata.Get(streamq.PartitionKeyMetadata)
	h.ByKey[k] = append(h.ByKey[k], seq)
	h.Count[m.UUID]++
	return h.Count[m.UUID]
}

// Total is how many distinct messages were handled.
func (h *KeyedHandled) Total() int {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	return len(h.Count)
}

// Handle runs handlers for ch that sleep 0 to 5 ms and ack, counting concurrency.
func (h *KeyedHandled) Handle(ch <-chan *message.Message, fail func(*message.Message, int) bool) {
	for m := range ch {
		go func() {
			storeMax(&h.Most, h.Running.Add(1))
			times := h.See(m)
			time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
			h.Running.Add(-1)
			if fail != nil && fail(m, times) {
				m.Nack()
				return
			}
			m.Ack()
		}()
	}
}

// KeyedSub is FastSub's config of group "g" with OrderByKey and n in flight per partition.
func KeyedSub(client redis.UniversalClient, n int) streamq.SubscriberConfig {
	cfg := FastSub(client, "g")
	cfg.Delivery.OrderByKey, cfg.Delivery.MaxInFlightPerPartition = true, n
	return cfg
}

// storeMax raises a to v when v is higher.
func storeMax(a *atomic.Int64, v int64) {
	for cur := a.Load(); v > cur; cur = a.Load() {
		if a.CompareAndSwap(cur, v) {
			return
		}
	}
}
