package streamq_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// keyedRun publishes n messages over keys keys to topic (one partition), seq per key in
// metadata "seq", in calls of 100.
func keyedPublish(t testing.TB, client redis.UniversalClient, topic string, keys, n int) {
	t.Helper()
	pub := newTestPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
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

// keyedHandled is what handlers saw: per key the seqs handed over in order, per UUID how
// often, and the most handlers at once.
type keyedHandled struct {
	mu      sync.Mutex
	byKey   map[string][]int
	count   map[string]int
	running atomic.Int64
	most    atomic.Int64
}

func newKeyedHandled() *keyedHandled {
	return &keyedHandled{byKey: map[string][]int{}, count: map[string]int{}}
}

// see records m's delivery and returns its key's seq and how often it was delivered.
func (h *keyedHandled) see(m *message.Message) int {
	seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
	h.mu.Lock()
	defer h.mu.Unlock()
	k := m.Metadata.Get(streamq.PartitionKeyMetadata)
	h.byKey[k] = append(h.byKey[k], seq)
	h.count[m.UUID]++
	return h.count[m.UUID]
}

func (h *keyedHandled) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.count)
}

// handleKeyed runs handlers for ch that sleep 0 to 5 ms and ack, counting concurrency.
func (h *keyedHandled) handle(ch <-chan *message.Message, fail func(*message.Message, int) bool) {
	for m := range ch {
		go func() {
			storeMax(&h.most, h.running.Add(1))
			times := h.see(m)
			time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
			h.running.Add(-1)
			if fail != nil && fail(m, times) {
				m.Nack()
				return
			}
			m.Ack()
		}()
	}
}

func keyedSub(client redis.UniversalClient, n int) streamq.SubscriberConfig {
	cfg := fastSub(client, "g")
	cfg.Delivery.OrderByKey, cfg.Delivery.MaxInFlightPerPartition = true, n
	return cfg
}

// TestOrderByKeyKeepsEachKeysOrder is acceptance 1 without faults: one partition, 64 keys,
// 16 handlers at once with random 0-5 ms handlers, 20,000 messages: every key's messages
// are handled in publish order, each once, with more than one handler at a time.
func TestOrderByKeyKeepsEachKeysOrder(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	const topic, keys, n = "by-key", 64, 20_000
	keyedPublish(t, client, topic, keys, n)
	sub := newTestSubscriber(t, keyedSub(client, 16))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	h := newKeyedHandled()
	go h.handle(ch, nil)
	require.Eventually(t, func() bool { return h.total() == n }, time.Minute, 20*time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, seqs := range h.byKey {
		for i, s := range seqs {
			require.Equal(t, i, s, "key %s: message %d handled out of order: %v", k, i, seqs[max(0, i-3):i+1])
		}
	}
	for uuid, c := range h.count {
		require.Equal(t, 1, c, "message %s handled %d times", uuid, c)
	}
	assert.Greater(t, h.most.Load(), int64(8), "handlers ran in parallel")
	assert.LessOrEqual(t, h.most.Load(), int64(16), "never more than MaxInFlightPerPartition")
	t.Logf("at most %d handlers at once", h.most.Load())
}

// TestOrderByKeyRetryHoldsItsKey is acceptance 2: a message of key K nacked twice is retried
// (after a backoff) before any later message of K is handled, while the other keys go on.
func TestOrderByKeyRetryHoldsItsKey(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	const topic = "by-key-retry"
	keyedPublish(t, client, topic, 4, 400) // keys k0..k3, 100 messages each
	cfg := keyedSub(client, 8)
	cfg.Retry.Policy = streamq.ExponentialBackoff{Base: 300 * time.Millisecond, Max: 300 * time.Millisecond, Attempts: 5}
	sub := newTestSubscriber(t, cfg)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	h := newKeyedHandled()
	var othersDuringRetry atomic.Int64
	var waiting atomic.Bool
	go h.handle(ch, func(m *message.Message, _ int) bool {
		if m.Metadata.Get(streamq.PartitionKeyMetadata) != "k0" {
			if waiting.Load() {
				othersDuringRetry.Add(1)
			}
			return false
		}
		fail := m.Metadata.Get("seq") == "10" && retriesOf(m) < 2
		waiting.Store(fail)
		return fail
	})
	require.Eventually(t, func() bool { return h.total() == 400 && len(h.byKey["k0"]) == 102 }, 30*time.Second, 20*time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	want := make([]int, 0, 102)
	for i := range 100 {
		want = append(want, i)
		if i == 10 {
			want = append(want, 10, 10) // the message and its two retries, before 11
		}
	}
	assert.Equal(t, want, h.byKey["k0"], "key k0: the retries came before its later messages")
	for _, k := range []string{"k1", "k2", "k3"} {
		assert.Len(t, h.byKey[k], 100, "key %s handled once each", k)
	}
	assert.Positive(t, othersDuringRetry.Load(), "other keys went on while k0 waited for its retry")
}

// The child process of TestOrderByKeySurvivesAKill is this test binary run again with
// -test.run=^TestKeyedChild$ and these variables set.
const (
	keyedChildEnv  = "STREAMQ_KEYED_CHILD" // "1" in the child
	keyedAddrEnv   = "STREAMQ_KEYED_ADDR"
	keyedTopicEnv  = "STREAMQ_KEYED_TOPIC"
	keyedLedgerEnv = "STREAMQ_KEYED_LEDGER" // one line per delivery: uuid key seq
)

func TestKeyedChild(_ *testing.T) {
	if os.Getenv(keyedChildEnv) != "1" {
		return
	}
	os.Exit(runKeyedChild())
}

func runKeyedChild() int {
	f, err := os.OpenFile(os.Getenv(keyedLedgerEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 2
	}
	client := redis.NewClient(&redis.Options{Addr: os.Getenv(keyedAddrEnv)})
	cfg := keyedSub(client, 16)
	cfg.Membership.ConsumerName = "doomed"
	sub, err := streamq.NewSubscriber(cfg, nil)
	if err != nil {
		return 2
	}
	ch, err := sub.Subscribe(context.Background(), os.Getenv(keyedTopicEnv))
	if err != nil {
		return 2
	}
	var mu sync.Mutex
	h := newKeyedHandled()
	h.handle(ch, func(m *message.Message, _ int) bool {
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintf(f, "%s %s %s\n", m.UUID, m.Metadata.Get(streamq.PartitionKeyMetadata), m.Metadata.Get("seq"))
		return false
	})
	return 0
}

// TestOrderByKeySurvivesAKill is acceptance 1 with a fault: a member (a child process) is
// killed with SIGKILL mid-run and another takes over. Nothing is lost, the first deliveries
// of each key stay in publish order, and the only messages delivered again are ones the
// killed member had been handed (in flight, or acked but not flushed).
func TestOrderByKeySurvivesAKill(t *testing.T) {
	redistest.SkipShort(t, "a killed child process")
	t.Parallel()
	srv, client := startRedis(t)
	const topic, keys, n = "by-key-kill", 64, 20_000
	keyedPublish(t, client, topic, keys, n)
	ledger := filepath.Join(t.TempDir(), "child.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeyedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), keyedChildEnv+"=1", keyedAddrEnv+"="+srv.Addr(), keyedTopicEnv+"="+topic, keyedLedgerEnv+"="+ledger)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return len(readKeyedLedger(t, ledger)) >= n/4 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	child := readKeyedLedger(t, ledger)

	sub := newTestSubscriber(t, keyedSub(client, 16))
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	h := newKeyedHandled()
	go h.handle(ch, nil)
	byChild := map[string]bool{}
	for _, d := range child {
		byChild[d.uuid] = true
	}
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		seen := len(byChild)
		for uuid := range h.count {
			if !byChild[uuid] {
				seen++
			}
		}
		return seen == n
	}, time.Minute, 20*time.Millisecond, "every message delivered")

	h.mu.Lock()
	defer h.mu.Unlock()
	again := 0
	for uuid, c := range h.count {
		require.Equal(t, 1, c, "the new owner delivered %s %d times", uuid, c)
		if byChild[uuid] {
			again++
		}
	}
	first := map[string][]int{} // per key, the seqs of first deliveries, child's then new owner's
	for _, d := range child {
		first[d.key] = append(first[d.key], d.seq)
	}
	for k, seqs := range h.byKey {
		for _, s := range seqs {
			if n := len(first[k]); n == 0 || s > first[k][n-1] {
				first[k] = append(first[k], s)
			}
		}
	}
	for k, seqs := range first {
		for i, s := range seqs {
			require.Equal(t, i, s, "key %s: first deliveries out of order: %v", k, seqs[max(0, i-3):i+1])
		}
	}
	t.Logf("the killed member handled %d messages; the next owner delivered %d of them again (in flight or acks not flushed at the kill)",
		len(child), again)
	assert.LessOrEqual(t, again, len(child))
}

type keyedDelivery struct {
	uuid, key string
	seq       int
}

func readKeyedLedger(t *testing.T, path string) []keyedDelivery {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []keyedDelivery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d keyedDelivery
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d", &d.uuid, &d.key, &d.seq); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// storeMax raises a to v when v is higher.
func storeMax(a *atomic.Int64, v int64) {
	for cur := a.Load(); v > cur; cur = a.Load() {
		if a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// TestOrderByKeyGracefulHandover: a member closed mid-run (Close: in-flight messages finish,
// acks are flushed, the leases released) and another taking over deliver every message
// exactly once between them, each key in publish order.
func TestOrderByKeyGracefulHandover(t *testing.T) {
	t.Parallel()
	_, client := startRedis(t)
	const topic, keys, n = "by-key-handover", 64, 10_000
	keyedPublish(t, client, topic, keys, n)
	h := newKeyedHandled()
	first, err := streamq.NewSubscriber(keyedSub(client, 16), testLogger())
	require.NoError(t, err)
	ch, err := first.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	go h.handle(ch, nil)
	require.Eventually(t, func() bool { return h.total() >= n/3 }, time.Minute, 5*time.Millisecond)
	require.NoError(t, first.Close())
	handedOver := h.total()

	second := newTestSubscriber(t, keyedSub(client, 16))
	ch, err = second.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	go h.handle(ch, nil)
	require.Eventually(t, func() bool { return h.total() == n }, time.Minute, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // a duplicate would arrive by now
	h.mu.Lock()
	defer h.mu.Unlock()
	for uuid, c := range h.count {
		require.Equal(t, 1, c, "message %s handled %d times", uuid, c)
	}
	for k, seqs := range h.byKey {
		for i, s := range seqs {
			require.Equal(t, i, s, "key %s out of order: %v", k, seqs[max(0, i-3):i+1])
		}
	}
	t.Logf("handed over after %d of %d messages", handedOver, n)
}

// retriesOf is a delivered message's retry count (0 on its first delivery).
func retriesOf(m *message.Message) int {
	n, _ := streamq.RetryCountFromCtx(m.Context())
	return n
}
