package streamq_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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

// clockSlack absorbs clock granularity in "not before" assertions on delivery times.
const clockSlack = 20 * time.Millisecond

// rtDelivery is one delivery as a retry test's handler saw it.
type rtDelivery struct {
	uuid, payload      string
	at                 time.Time
	group, consumer    string
	partition, retries int
	streamID           string
	originalID         string
	lastError          string
	hasLastError       bool
}

func rtDeliveryOf(msg *message.Message) rtDelivery {
	ctx := msg.Context()
	d := rtDelivery{uuid: msg.UUID, payload: string(msg.Payload), at: time.Now()}
	d.group, _ = streamq.ConsumerGroupFromCtx(ctx)
	d.consumer, _ = streamq.ConsumerFromCtx(ctx)
	d.partition, _ = streamq.PartitionFromCtx(ctx)
	d.retries, _ = streamq.RetryCountFromCtx(ctx)
	d.streamID, _ = streamq.StreamIDFromCtx(ctx)
	d.originalID, _ = streamq.OriginalIDFromCtx(ctx)
	d.lastError, d.hasLastError = streamq.LastErrorFromCtx(ctx)
	return d
}

// rtLog collects deliveries from several goroutines.
type rtLog struct {
	mu   sync.Mutex
	rows []rtDelivery
}

func (l *rtLog) add(d rtDelivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, d)
}

func (l *rtLog) all() []rtDelivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]rtDelivery(nil), l.rows...)
}

// of returns the deliveries of one message (by UUID), optionally of one group ("": any).
func (l *rtLog) of(uuid, group string) []rtDelivery {
	var out []rtDelivery
	for _, d := range l.all() {
		if d.uuid == uuid && (group == "" || d.group == group) {
			out = append(out, d)
		}
	}
	return out
}

func (l *rtLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rows)
}

// dump describes every delivery, for failure messages.
func (l *rtLog) dump() string {
	var b strings.Builder
	for _, d := range l.all() {
		fmt.Fprintf(&b, "\n  %s %q group=%s consumer=%s p=%d id=%s retries=%d original=%s at=%s",
			d.uuid, d.payload, d.group, d.consumer, d.partition, d.streamID, d.retries, d.originalID, d.at.Format("15:04:05.000"))
	}
	return "deliveries:" + b.String()
}

// rtEventually is require.Eventually that describes the state (what, evaluated on failure).
func rtEventually(t *testing.T, cond func() bool, timeout time.Duration, what func() string) {
	t.Helper()
	if !assert.Eventually(t, cond, timeout, 20*time.Millisecond) {
		t.Fatal(what())
	}
}

// rtHandle records every message of ch and acks it when ack returns true, else nacks it,
// until ch closes.
func rtHandle(ch <-chan *message.Message, log *rtLog, ack func(*message.Message, rtDelivery) bool) {
	go func() {
		for msg := range ch {
			d := rtDeliveryOf(msg)
			log.add(d)
			if ack(msg, d) {
				msg.Ack()
			} else {
				msg.Nack()
			}
		}
	}()
}

// rtNext waits for the next message of ch.
func rtNext(t *testing.T, ch <-chan *message.Message, timeout time.Duration) *message.Message {
	t.Helper()
	select {
	case msg, ok := <-ch:
		require.True(t, ok, "subscription closed")
		return msg
	case <-time.After(timeout):
		t.Fatalf("no message within %s", timeout)
		return nil
	}
}

func rtMessage(payload string) *message.Message {
	return message.NewMessage(watermill.NewUUID(), []byte(payload))
}

// rtDLQ reads partition p's dead letters.
func rtDLQ(t *testing.T, client redis.UniversalClient, topic string, p int) []redis.XMessage {
	t.Helper()
	entries, err := client.XRange(context.Background(), keys.New("", "").DLQ(topic, p), "-", "+").Result()
	require.NoError(t, err)
	return entries
}

// rtWaitDLQ waits until partition p's DLQ holds n entries and returns them.
func rtWaitDLQ(t *testing.T, client redis.UniversalClient, topic string, p, n int, timeout time.Duration) []redis.XMessage {
	t.Helper()
	var entries []redis.XMessage
	require.Eventually(t, func() bool {
		entries = rtDLQ(t, client, topic, p)
		return len(entries) >= n
	}, timeout, 20*time.Millisecond, "DLQ of %s/%d never reached %d entries", topic, p, n)
	require.Len(t, entries, n)
	return entries
}

// rtDeadMessage decodes the Watermill message stored in a DLQ entry.
func rtDeadMessage(t *testing.T, e redis.XMessage) *message.Message {
	t.Helper()
	msg, err := streamq.DefaultMarshaler{}.Unmarshal(e.Values)
	require.NoError(t, err)
	return msg
}

// rtSettled waits until group has nothing pending on partition p and no parked retry.
func rtSettled(t *testing.T, client redis.UniversalClient, topic, group string, p int) {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	require.Eventually(t, func() bool {
		pending, err := client.XPending(ctx, space.PartitionStream(topic, p), group).Result()
		if err != nil || pending.Count != 0 {
			return false
		}
		parked, err := client.ZCard(ctx, space.Retry(topic, p, group)).Result()
		if err != nil || parked != 0 {
			return false
		}
		items, err := client.HLen(ctx, space.RetryItems(topic, p, group)).Result()
		return err == nil && items == 0
	}, 5*time.Second, 20*time.Millisecond, "group %s still has pending entries or parked retries on %s/%d", group, topic, p)
}

func TestExponentialBackoffTable(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	eb := streamq.ExponentialBackoff{Base: 100 * ms, Max: 800 * ms}
	tests := []struct {
		name    string
		policy  streamq.ExponentialBackoff
		attempt int
		want    time.Duration
	}{
		{"attempt 1", eb, 1, 100 * ms},
		{"attempt 2", eb, 2, 200 * ms},
		{"attempt 3", eb, 3, 400 * ms},
		{"attempt 4", eb, 4, 800 * ms},
		{"attempt 5 capped", eb, 5, 800 * ms},
		{"attempt 0 is base", eb, 0, 100 * ms},
		{"negative attempt is base", eb, -7, 100 * ms},
		{"attempt MinInt is base", eb, math.MinInt, 100 * ms},
		{"max below base uses base", streamq.ExponentialBackoff{Base: 100 * ms, Max: 50 * ms}, 4, 100 * ms},
		{"no max uses base", streamq.ExponentialBackoff{Base: 100 * ms}, 4, 100 * ms},
		{"zero base retries at once", streamq.ExponentialBackoff{Max: time.Second}, 3, 0},
		{"attempt 70 does not overflow", eb, 70, 800 * ms},
		{"attempt MaxInt does not overflow", eb, math.MaxInt, 800 * ms},
		{"max MaxInt64, attempt 70", streamq.ExponentialBackoff{Base: time.Second, Max: math.MaxInt64}, 70, math.MaxInt64},
		{"max MaxInt64, attempt MaxInt", streamq.ExponentialBackoff{Base: time.Nanosecond, Max: math.MaxInt64}, math.MaxInt, math.MaxInt64},
		{"default policy, first", streamq.DefaultRetryPolicy(), 1, time.Second},
		{"default policy, fifth", streamq.DefaultRetryPolicy(), 5, 16 * time.Second},
		{"default policy, capped", streamq.DefaultRetryPolicy(), 30, 60 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.policy.NextBackoff(tc.attempt)
			assert.Equal(t, tc.want, got)
			assert.GreaterOrEqual(t, got, time.Duration(0))
		})
	}
}

func TestExponentialBackoffJitter(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	tests := []struct {
		name   string
		jitter float64
		lowest func(d time.Duration) time.Duration
	}{
		{"half", 0.5, func(d time.Duration) time.Duration { return d / 2 }},
		{"above 1 reads as 1", 3, func(time.Duration) time.Duration { return 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			policy := streamq.ExponentialBackoff{Base: 100 * ms, Max: 800 * ms, Jitter: tc.jitter}
			plain := streamq.ExponentialBackoff{Base: 100 * ms, Max: 800 * ms}
			for attempt := 1; attempt <= 5; attempt++ {
				d := plain.NextBackoff(attempt)
				distinct := map[time.Duration]bool{}
				for i := 0; i < 500; i++ {
					got := policy.NextBackoff(attempt)
					require.GreaterOrEqual(t, got, tc.lowest(d), "attempt %d", attempt)
					require.LessOrEqual(t, got, d, "attempt %d", attempt)
					distinct[got] = true
				}
				assert.Greater(t, len(distinct), 1, "jitter spreads attempt %d", attempt)
			}
		})
	}
}

func TestExponentialBackoffMaxAttempts(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 3, streamq.ExponentialBackoff{Attempts: 3}.MaxAttempts())
	assert.Equal(t, -1, streamq.ExponentialBackoff{Attempts: -1}.MaxAttempts())
	assert.Zero(t, streamq.DefaultRetryPolicy().MaxAttempts(), "the default policy states no cap: Retry.MaxRetries decides")
}

// TestRetryBackoffThenDeadLetter: an always-failing message is delivered 1 + 2 times with the
// policy's backoffs (through the retry set and the mover), then dead-lettered with the seed's
// fields, while the message behind it in the partition is handled meanwhile.
func TestRetryBackoffThenDeadLetter(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testRetryBackoffThenDeadLetter)
}

func testRetryBackoffThenDeadLetter(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, group = "retry-backoff", "g"
	cfg := streamqtest.FastSub(client, group)
	cfg.Retry.Policy = streamq.ExponentialBackoff{Base: 200 * time.Millisecond, Max: 2 * time.Second, Attempts: 2}
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})

	poison, second := rtMessage("poison"), rtMessage("second")
	dlqKey := keys.New("", "").DLQ(topic, 0)
	secondSawDLQ := atomic.Int64{}
	secondSawDLQ.Store(-1)
	log := &rtLog{}
	rtHandle(ch, log, func(msg *message.Message, _ rtDelivery) bool {
		if msg.UUID == second.UUID {
			n, err := client.XLen(ctx, dlqKey).Result()
			if err == nil {
				secondSawDLQ.Store(n)
			}
		}
		return msg.UUID != poison.UUID
	})
	require.NoError(t, pub.Publish(topic, poison, second))

	dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
	got := log.of(poison.UUID, "")
	require.Len(t, got, 3, "first delivery + 2 retries")
	for i, d := range got {
		assert.Equal(t, i, d.retries, "RetryCountFromCtx of delivery %d", i)
		assert.Equal(t, got[0].streamID, d.originalID, "OriginalIDFromCtx of delivery %d", i)
		assert.Equal(t, 0, d.partition)
	}
	assert.NotEqual(t, got[0].streamID, got[1].streamID, "a retry is a new entry")
	gap1, gap2 := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at)
	t.Logf("gaps between deliveries: %s, %s", gap1, gap2)
	assert.GreaterOrEqual(t, gap1, 200*time.Millisecond-clockSlack, "first retry not before its 200ms backoff")
	assert.GreaterOrEqual(t, gap2, 400*time.Millisecond-clockSlack, "second retry not before its 400ms backoff")
	assert.Greater(t, gap2, gap1)
	assert.True(t, got[1].hasLastError)
	assert.Equal(t, "nacked", got[1].lastError)

	e := dead[0].Values
	assert.Equal(t, "2", e["retryCount"])
	assert.Equal(t, "2", e["maxRetries"])
	assert.Equal(t, "0", e["partitionId"])
	assert.Equal(t, topic, e["originalTopic"])
	assert.Equal(t, got[0].streamID, e["originalMessageId"])
	assert.Equal(t, got[2].streamID, e["originalStreamId"])
	assert.Contains(t, e["reason"], "retries exhausted")
	assert.Equal(t, group, e["group"])
	assert.Equal(t, poison.UUID, e[streamq.UUIDField])
	deadMsg := rtDeadMessage(t, dead[0])
	assert.Equal(t, "poison", string(deadMsg.Payload))
	assert.Contains(t, deadMsg.Metadata.Get(streamq.DeadLetterMetadata), "retries exhausted")
	assert.Empty(t, deadMsg.Metadata.Get(streamq.RetryGroupMetadata), "the DLQ entry is not a retry of one group")

	seconds := log.of(second.UUID, "")
	require.Len(t, seconds, 1)
	assert.True(t, seconds[0].at.Before(got[1].at), "the next message is not blocked by the parked retry")
	assert.Equal(t, int64(0), secondSawDLQ.Load(), "the second message was handled before the poison one reached the DLQ")

	require.Never(t, func() bool { return len(log.of(poison.UUID, "")) > 3 }, 300*time.Millisecond, 20*time.Millisecond,
		"no delivery after the dead letter")
	rtSettled(t, client, topic, group, 0)
	stats := sub.Stats()
	assert.Equal(t, int64(1), stats.DeadLettered)
	assert.Equal(t, int64(3), stats.Nacked)
	assert.Equal(t, int64(1), stats.Acked)
}

// TestNackPerMessageMaxRetries: x-max-retries lowers the policy's cap for one message.
func TestNackPerMessageMaxRetries(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testNackPerMessageMaxRetries)
}

func testNackPerMessageMaxRetries(t *testing.T, client redis.UniversalClient) {
	const topic = "max-retries"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Attempts: 5}
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	log := &rtLog{}
	rtHandle(ch, log, func(*message.Message, rtDelivery) bool { return false })

	msg := rtMessage("capped")
	msg.Metadata.Set(streamq.MaxRetriesMetadata, "1")
	require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))

	dead := rtWaitDLQ(t, client, topic, 0, 1, 10*time.Second)
	assert.Len(t, log.of(msg.UUID, ""), 2, "1 delivery + 1 retry")
	assert.Equal(t, "1", dead[0].Values["retryCount"])
	assert.Equal(t, "1", dead[0].Values["maxRetries"])
	assert.Contains(t, dead[0].Values["reason"], "retries exhausted (1)")
}

// TestTwoGroupsRetryStaysInItsGroup: a nack in group A retries for A only; B handles the
// message once and never sees A's retry entry.
func TestTwoGroupsRetryStaysInItsGroup(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testTwoGroupsRetryStaysInItsGroup)
}

func testTwoGroupsRetryStaysInItsGroup(t *testing.T, client redis.UniversalClient) {
	tests := []struct {
		name   string
		policy streamq.ExponentialBackoff
	}{
		{"requeued at once", streamq.ExponentialBackoff{Attempts: -1}},
		{"through the retry set", streamq.ExponentialBackoff{Base: 100 * time.Millisecond, Attempts: -1}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const partitions = 2
			topic := "two-groups-" + strconv.Itoa(i)
			_, chA := streamqtest.SubscribeMember(t, client, topic, "A", "a", partitions, func(c *streamq.SubscriberConfig) { c.Retry.Policy = tc.policy })
			_, chB := streamqtest.SubscribeMember(t, client, topic, "B", "b", partitions, nil)

			var msgs []*message.Message
			for i := 0; i < 6; i++ {
				m := rtMessage(strconv.Itoa(i))
				m.Metadata.Set(streamq.PartitionKeyMetadata, "key-"+strconv.Itoa(i))
				msgs = append(msgs, m)
			}
			flaky := msgs[2]
			log := &rtLog{}
			var nackedOnce atomic.Bool
			rtHandle(chA, log, func(msg *message.Message, _ rtDelivery) bool {
				return msg.UUID != flaky.UUID || !nackedOnce.CompareAndSwap(false, true)
			})
			rtHandle(chB, log, func(*message.Message, rtDelivery) bool { return true })
			pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
			require.NoError(t, pub.Publish(topic, msgs...))

			want := func(uuid, group string) int {
				if uuid == flaky.UUID && group == "A" {
					return 2
				}
				return 1
			}
			settled := func() bool {
				for _, m := range msgs {
					for _, g := range []string{"A", "B"} {
						if len(log.of(m.UUID, g)) != want(m.UUID, g) {
							return false
						}
					}
				}
				return true
			}
			rtEventually(t, settled, 10*time.Second, log.dump)
			total := log.len()
			require.Never(t, func() bool { return log.len() != total }, 500*time.Millisecond, 20*time.Millisecond,
				"an extra delivery after everything settled")
			require.True(t, settled())

			a := log.of(flaky.UUID, "A")
			assert.Equal(t, 0, a[0].retries)
			assert.Equal(t, 1, a[1].retries)
			assert.Equal(t, a[0].streamID, a[1].originalID)
			b := log.of(flaky.UUID, "B")
			assert.Equal(t, 0, b[0].retries)
			assert.Equal(t, a[0].streamID, b[0].streamID, "B handled the original entry, not A's retry")
			for _, d := range log.all() {
				if d.group == "B" {
					assert.Zero(t, d.retries, "group B saw a retry entry: %+v", d)
				}
			}
			for p := 0; p < partitions; p++ {
				rtSettled(t, client, topic, "A", p)
				rtSettled(t, client, topic, "B", p)
			}
		})
	}
}

// TestCrashWhileRetryParkedIsTakenOver: the member that nacked crashes while the retry
// waits in the retry set; the next owner of the partition moves and delivers it, once.
func TestCrashWhileRetryParkedIsTakenOver(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testCrashWhileRetryParkedIsTakenOver)
}

func testCrashWhileRetryParkedIsTakenOver(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, group = "crash-retry", "g"
	tweak := func(c *streamq.SubscriberConfig) {
		c.Membership.LeaseTTL = 1500 * time.Millisecond
		c.Retry.Policy = streamq.ExponentialBackoff{Base: time.Second, Attempts: 3}
	}
	subA, chA := streamqtest.SubscribeMember(t, client, topic, group, "a", 1, tweak)
	streamqtest.WaitOwners(t, client, topic, group, 1, streamqtest.Balanced(map[string]int{"a": 1}))
	_, chB := streamqtest.SubscribeMember(t, client, topic, group, "b", 1, tweak)

	msg := rtMessage("parked")
	require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))
	first := rtNext(t, chA, 10*time.Second)
	require.Equal(t, msg.UUID, first.UUID)
	firstID, _ := streamq.StreamIDFromCtx(first.Context())
	first.Nack()

	space := keys.New("", "")
	require.Eventually(t, func() bool {
		n, err := client.ZCard(ctx, space.Retry(topic, 0, group)).Result()
		return err == nil && n == 1
	}, 5*time.Second, 5*time.Millisecond, "the retry was never parked")
	crashedAt := time.Now()
	streamq.Crash(subA)
	for range chA {
		t.Error("member a delivered after its crash")
	}

	log := &rtLog{}
	rtHandle(chB, log, func(*message.Message, rtDelivery) bool { return true })
	require.Eventually(t, func() bool { return log.len() >= 1 }, 10*time.Second, 20*time.Millisecond,
		"the parked retry was lost with the crashed member")
	require.Never(t, func() bool { return log.len() > 1 }, time.Second, 20*time.Millisecond,
		"the retry was delivered twice after the crash")

	got := log.all()[0]
	t.Logf("retry delivered to b %s after the crash", got.at.Sub(crashedAt))
	assert.Equal(t, msg.UUID, got.uuid)
	assert.Equal(t, "b", got.consumer)
	assert.Equal(t, 1, got.retries)
	assert.Equal(t, firstID, got.originalID)
	assert.Equal(t, []string{"b"}, streamqtest.LeaseOwners(t, client, topic, group, 1))
	rtSettled(t, client, topic, group, 0)
	assert.Empty(t, rtDLQ(t, client, topic, 0))
}

// TestDeadLetterCountedInStats: every dead letter, asked for or after exhausted retries,
// counts in Stats().DeadLettered.
func TestDeadLetterCountedInStats(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDeadLetterCountedInStats)
}

func testDeadLetterCountedInStats(t *testing.T, client redis.UniversalClient) {
	const topic = "dead-stats"
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry = streamq.RetryConfig{MaxRetries: streamq.NoRetries, MoverInterval: cfg.Retry.MoverInterval} // a plain nack dead-letters at once
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)
	log := &rtLog{}
	rtHandle(ch, log, func(msg *message.Message, _ rtDelivery) bool {
		switch string(msg.Payload) {
		case "ok":
			return true
		case "asked":
			_ = streamq.DeadLetter(msg, errors.New("asked"))
		}
		return false
	})
	require.Zero(t, sub.Stats().DeadLettered)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	require.NoError(t, pub.Publish(topic, rtMessage("asked"), rtMessage("ok"), rtMessage("asked"), rtMessage("nacked")))

	dead := rtWaitDLQ(t, client, topic, 0, 3, 10*time.Second)
	assert.Equal(t, "asked", dead[0].Values["reason"])
	assert.Contains(t, dead[2].Values["reason"], "retries exhausted (0)")
	require.Eventually(t, func() bool { return sub.Stats().DeadLettered == 3 }, 5*time.Second, 10*time.Millisecond)
	stats := sub.Stats()
	assert.Equal(t, int64(4), stats.Delivered)
	assert.Equal(t, int64(1), stats.Acked)
	assert.Equal(t, int64(3), stats.Nacked)
	assert.Zero(t, stats.Malformed)
}

func TestDeadLetterHelper(t *testing.T) {
	t.Parallel()
	errInvalid := errors.New("invalid order")
	tests := []struct {
		name       string
		reason     error
		wantReason string
	}{
		{"wrapped reason", fmt.Errorf("order o-1: %w", errInvalid), "order o-1: invalid order"},
		{"nil reason", nil, "dead-lettered by handler"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := rtMessage("x")
			err := streamq.DeadLetter(msg, tc.reason)
			require.Error(t, err)
			assert.ErrorIs(t, err, streamq.ErrDeadLettered)
			if tc.reason != nil {
				assert.ErrorIs(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.wantReason)
			}
			assert.Equal(t, tc.wantReason, msg.Metadata.Get(streamq.DeadLetterMetadata))
			assert.NotContains(t, err.Error(), "%!", "error text %q", err.Error())
		})
	}
}

// TestRetryCapFromOnePlace: a message is handled at most 1 + N times, N from one place: the
// default 3; the policy's Attempts when only the policy states a cap (10: 11 handler calls,
// where two caps used to give 4); a message's MaxRetriesMetadata over either.
func TestRetryCapFromOnePlace(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testRetryCapFromOnePlace)
}

func testRetryCapFromOnePlace(t *testing.T, client redis.UniversalClient) {
	tests := []struct {
		name    string
		retry   streamq.RetryConfig
		message string // MaxRetriesMetadata, "" for none
		want    int    // retries
	}{
		{name: "default", retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Base: 10 * time.Millisecond}}, want: 3},
		{name: "the policy states it", retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Base: 5 * time.Millisecond, Attempts: 10}}, want: 10},
		{name: "MaxRetries states it", retry: streamq.RetryConfig{MaxRetries: 5, Policy: streamq.ExponentialBackoff{Base: 5 * time.Millisecond}}, want: 5},
		{name: "the message's over the config", retry: streamq.RetryConfig{MaxRetries: 1, Policy: streamq.ExponentialBackoff{Base: 5 * time.Millisecond}}, message: "4", want: 4},
		{name: "NoRetries", retry: streamq.RetryConfig{MaxRetries: streamq.NoRetries, Policy: streamq.ExponentialBackoff{Base: 5 * time.Millisecond}}, want: 0},
		{name: "the policy states NoRetries", retry: streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Attempts: streamq.NoRetries}}, want: 0},
		{name: "a message's 0 over the config", retry: streamq.RetryConfig{MaxRetries: 5, Policy: streamq.ExponentialBackoff{Base: 5 * time.Millisecond}}, message: "0", want: 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := "retry-cap-" + strconv.Itoa(i)
			cfg := streamqtest.FastSub(client, "g")
			tt.retry.MoverInterval = cfg.Retry.MoverInterval
			cfg.Retry = tt.retry
			sub := streamqtest.NewSubscriber(t, cfg)
			ch, err := sub.Subscribe(context.Background(), topic)
			require.NoError(t, err)
			log := &rtLog{}
			rtHandle(ch, log, func(*message.Message, rtDelivery) bool { return false })

			msg := rtMessage("always nacked")
			if tt.message != "" {
				msg.Metadata.Set(streamq.MaxRetriesMetadata, tt.message)
			}
			require.NoError(t, streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client}).Publish(topic, msg))

			dead := rtWaitDLQ(t, client, topic, 0, 1, 20*time.Second)
			assert.Len(t, log.of(msg.UUID, ""), 1+tt.want, "1 delivery + %d retries", tt.want)
			assert.Equal(t, strconv.Itoa(tt.want), dead[0].Values["retryCount"])
			assert.Equal(t, strconv.Itoa(tt.want), dead[0].Values["maxRetries"])
		})
	}
}
