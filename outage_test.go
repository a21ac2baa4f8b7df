package streamq_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/redistest"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// downstream is a service that is down until up is closed.
type downstream struct{ up chan struct{} }

var errUnavailable = errors.New("payments: 503 Service Unavailable")

func (d downstream) call() error {
	select {
	case <-d.up:
		return nil
	default:
		return errUnavailable
	}
}

// outageLedger records a stage's successful deliveries: per partition the stream ids in
// the order handled, per message how many times it succeeded.
type outageLedger struct {
	mu     sync.Mutex
	ids    map[int][]string
	ok     map[string]int
	failed atomic.Int64
}

func newOutageLedger() *outageLedger {
	return &outageLedger{ids: map[int][]string{}, ok: map[string]int{}}
}

func (l *outageLedger) success(msg *message.Message) {
	p, _ := streamq.PartitionFromCtx(msg.Context())
	id, _ := streamq.StreamIDFromCtx(msg.Context())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids[p] = append(l.ids[p], id)
	l.ok[msg.Metadata.Get("seq")]++
}

func (l *outageLedger) handled() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ok)
}

// TestOutagePausesInsteadOfDeadLettering is #30's second acceptance: a 30 s downstream
// outage over a 5,000-message backlog on 4 partitions. A handler that marks the failure
// with Outage: no dead letter, every message handled successfully once after the recovery,
// each partition in stream order, and the outage visible in Stats and in the record admin
// reads while it lasts. The same outage, unmarked with the default retries, dead-letters
// (the control).
func TestOutagePausesInsteadOfDeadLettering(t *testing.T) {
	redistest.SkipShort(t, "a 30 s outage")
	t.Parallel()
	t.Run("marked", func(t *testing.T) {
		t.Parallel()
		client := redistestClient(t)
		const n = 5000
		streamqtest.PublishNumbered(t, client, "outage", n)
		cfg := outageSub(client)
		sub := streamqtest.NewSubscriber(t, cfg)
		svc := downstream{up: make(chan struct{})}
		ledger := newOutageLedger()
		rtRouter(t, sub, "outage", func(msg *message.Message) error {
			if err := svc.call(); err != nil {
				ledger.failed.Add(1)
				return streamq.Outage(msg, err)
			}
			ledger.success(msg)
			return nil
		})
		require.Eventually(t, func() bool { return len(sub.Stats().Outages) == 4 }, 20*time.Second, 50*time.Millisecond,
			"every partition waits out the outage")
		o := sub.Stats().Outages[0]
		assert.Equal(t, "outage", o.Topic)
		assert.Contains(t, o.Reason, "503")
		assert.True(t, o.NextProbe.After(o.Since))
		recs, err := outage.Read(context.Background(), client, []string{keys.New("", "").Outage("outage", 0, "g")})
		require.NoError(t, err)
		require.NotNil(t, recs[0], "the record admin reads")
		assert.Equal(t, streamq.SubscriberConfigOf(sub).Membership.ConsumerName, recs[0].Member)
		time.Sleep(30 * time.Second) // the outage
		close(svc.up)
		require.Eventually(t, func() bool { return ledger.handled() == n }, 2*time.Minute, 100*time.Millisecond)
		require.Eventually(t, func() bool { return len(sub.Stats().Outages) == 0 }, 10*time.Second, 50*time.Millisecond)
		st := sub.Stats()
		assert.Zero(t, st.DeadLettered)
		assert.Zero(t, dlqLen(t, client, "outage", 4), "no dead letter")
		for seq, c := range ledger.ok {
			require.Equal(t, 1, c, "message %s handled successfully %d times", seq, c)
		}
		for p, ids := range ledger.ids {
			for i := 1; i < len(ids); i++ {
				require.True(t, idLess(ids[i-1], ids[i]), "partition %d out of order at %d: %s then %s", p, i, ids[i-1], ids[i])
			}
		}
		recs, err = outage.Read(context.Background(), client, []string{keys.New("", "").Outage("outage", 0, "g")})
		require.NoError(t, err)
		assert.Nil(t, recs[0], "the record is gone once the partition resumed")
		t.Logf("%d failed deliveries during the outage (probes and in-flight), 0 dead letters", ledger.failed.Load())
	})
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		client := redistestClient(t)
		streamqtest.PublishNumbered(t, client, "outage", 200)
		sub := streamqtest.NewSubscriber(t, outageSub(client))
		svc := downstream{up: make(chan struct{})}
		rtRouter(t, sub, "outage", func(*message.Message) error { return svc.call() })
		require.Eventually(t, func() bool { return dlqLen(t, client, "outage", 4) > 0 }, 30*time.Second, 100*time.Millisecond,
			"an unmarked outage burns the retries and dead-letters")
		close(svc.up)
	})
}

func redistestClient(t *testing.T) redis.UniversalClient {
	_, client := streamqtest.StartRedis(t)
	return client
}

// outageSub has the default retries (1, 2, 4 s) and probes backing off 1 s to 4 s.
func outageSub(client redis.UniversalClient) streamq.SubscriberConfig {
	c := streamqtest.FastSub(client, "g")
	c.Retry = streamq.RetryConfig{MoverInterval: 100 * time.Millisecond, Outage: streamq.OutageConfig{MaxBackoff: 4 * time.Second}}
	return c
}

// idLess orders two stream ids.
func idLess(a, b string) bool {
	var am, as, bm, bs uint64
	_, _ = fmt.Sscanf(a, "%d-%d", &am, &as)
	_, _ = fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return am < bm || am == bm && as < bs
}

// TestOutageDetectedByFailuresInARow: a handler that cannot tell an outage from a bad
// message (unmarked errors) and Retry.Outage.After 3: the first two failures of a
// partition are retried as usual, the third holds the partition; after the outage every
// message is handled successfully once and none is dead-lettered.
func TestOutageDetectedByFailuresInARow(t *testing.T) {
	t.Parallel()
	client := redistestClient(t)
	const n = 300
	streamqtest.PublishNumbered(t, client, "in-a-row", n)
	cfg := outageSub(client)
	cfg.Retry.Outage.After = 3
	sub := streamqtest.NewSubscriber(t, cfg)
	svc := downstream{up: make(chan struct{})}
	ledger := newOutageLedger()
	rtRouter(t, sub, "in-a-row", func(msg *message.Message) error {
		if err := svc.call(); err != nil {
			ledger.failed.Add(1)
			return err
		}
		ledger.success(msg)
		return nil
	}, streamq.FailureMiddleware(nil))
	require.Eventually(t, func() bool { return len(sub.Stats().Outages) == 4 }, 20*time.Second, 50*time.Millisecond)
	assert.Contains(t, sub.Stats().Outages[0].Reason, "503", "the handler's error, recorded by FailureMiddleware")
	time.Sleep(3 * time.Second) // the outage goes on: no retry, no dead letter
	close(svc.up)
	require.Eventually(t, func() bool { return ledger.handled() == n }, time.Minute, 50*time.Millisecond)
	assert.Zero(t, sub.Stats().DeadLettered)
	assert.Zero(t, dlqLen(t, client, "in-a-row", 4))
	for seq, c := range ledger.ok {
		require.Equal(t, 1, c, "message %s handled successfully %d times", seq, c)
	}
}

// TestOutageWithMessagesInFlight: eight messages in flight per partition fail together;
// one probes, the others wait for the outage to end and are delivered again then.
func TestOutageWithMessagesInFlight(t *testing.T) {
	t.Parallel()
	client := redistestClient(t)
	const n = 400
	streamqtest.PublishNumbered(t, client, "in-flight", n)
	cfg := outageSub(client)
	cfg.Delivery.MaxInFlightPerPartition = 8
	sub := streamqtest.NewSubscriber(t, cfg)
	svc := downstream{up: make(chan struct{})}
	ledger := newOutageLedger()
	rtRouter(t, sub, "in-flight", func(msg *message.Message) error {
		if err := svc.call(); err != nil {
			ledger.failed.Add(1)
			return streamq.Outage(msg, err)
		}
		ledger.success(msg)
		return nil
	})
	require.Eventually(t, func() bool { return len(sub.Stats().Outages) == 4 }, 20*time.Second, 50*time.Millisecond)
	time.Sleep(3 * time.Second)
	failed := ledger.failed.Load()
	assert.LessOrEqual(t, failed, int64(4*8+4*3), "at most the messages in flight, then one probe a partition per backoff")
	close(svc.up)
	require.Eventually(t, func() bool { return ledger.handled() == n }, time.Minute, 50*time.Millisecond)
	assert.Zero(t, dlqLen(t, client, "in-flight", 4))
	for seq, c := range ledger.ok {
		require.Equal(t, 1, c, "message %s handled successfully %d times", seq, c)
	}
}

// TestOutageCarriedOverByTheNextOwner: a member waiting out an outage crashes, and another
// takes its partitions over. If the downstream is still down, the next owner carries the
// outage on (the same start); once a delivery succeeds (at once, when the downstream
// recovered meanwhile) it reports the recovery and clears the record: admin shows no outage
// that ended with its first owner gone.
func TestOutageCarriedOverByTheNextOwner(t *testing.T) {
	t.Parallel()
	for _, stillDown := range []bool{true, false} {
		t.Run(fmt.Sprintf("still down %v", stillDown), func(t *testing.T) {
			t.Parallel()
			testOutageCarriedOver(t, stillDown)
		})
	}
}

func testOutageCarriedOver(t *testing.T, stillDown bool) {
	client := redistestClient(t)
	const n, topic = 40, "carried"
	streamqtest.PublishNumbered(t, client, topic, n)
	svc := downstream{up: make(chan struct{})}
	ledger := newOutageLedger()
	handler := func(msg *message.Message) error {
		if err := svc.call(); err != nil {
			ledger.failed.Add(1)
			return streamq.Outage(msg, err)
		}
		ledger.success(msg)
		return nil
	}
	first := streamqtest.NewSubscriber(t, outageSub(client))
	rtRouter(t, first, topic, handler)
	require.Eventually(t, func() bool { return len(first.Stats().Outages) == 4 }, 20*time.Second, 50*time.Millisecond)
	since := map[int]time.Time{}
	for _, o := range first.Stats().Outages {
		since[o.Partition] = o.Since
	}
	streamq.Crash(first)
	space := keys.New("", "")
	recordKeys := make([]string, 4)
	for p := range recordKeys {
		recordKeys[p] = space.Outage(topic, p, "g")
	}
	records := func() int {
		recs, err := outage.Read(context.Background(), client, recordKeys)
		require.NoError(t, err)
		n := 0
		for _, r := range recs {
			if r != nil {
				n++
			}
		}
		return n
	}
	require.Equal(t, 4, records(), "the crashed member's records")

	if !stillDown {
		close(svc.up)
	}
	next := streamqtest.NewSubscriber(t, outageSub(client))
	rtRouter(t, next, topic, handler)
	if stillDown {
		require.Eventually(t, func() bool { return len(next.Stats().Outages) == 4 }, 20*time.Second, 50*time.Millisecond,
			"the next owner meets the outage")
		for _, o := range next.Stats().Outages {
			assert.True(t, since[o.Partition].Equal(o.Since), "partition %d: the outage keeps its start %s, not %s", o.Partition, since[o.Partition], o.Since)
		}
		close(svc.up)
	}
	require.Eventually(t, func() bool { return ledger.handled() == n }, time.Minute, 50*time.Millisecond)
	// The records would outlive the recovery by 10 s and more (2 probe waits and a slack).
	require.Eventually(t, func() bool { return records() == 0 }, 5*time.Second, 50*time.Millisecond,
		"every record cleared by the owner that saw the recovery")
	assert.Empty(t, next.Stats().Outages)
}
