package streamq_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestMoverSkipsBadItemsAndKeepsRunning writes retry items by hand, as another tool or an
// older version might have: a bad partition reads as 0 (the seed's rule), unusable items are
// dropped, and neither stops the mover.
func TestMoverSkipsBadItemsAndKeepsRunning(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testMoverSkipsBadItemsAndKeepsRunning)
}

func testMoverSkipsBadItemsAndKeepsRunning(t *testing.T, client redis.UniversalClient) {
	const topic, group, partitions = "mover", "g", 2
	_, ch := streamqtest.SubscribeMember(t, client, topic, group, "m", partitions, nil)
	streamqtest.WaitOwners(t, client, topic, group, partitions, streamqtest.Balanced(map[string]int{"m": partitions}))
	log := &rtLog{}
	rtHandle(ch, log, func(*message.Message, rtDelivery) bool { return true })
	space := keys.New("", "")

	// fields is a valid entry of the default format.
	fields := func(uuid string, md map[string]string) []string {
		msg := message.NewMessage(uuid, []byte("payload of "+uuid))
		for k, v := range md {
			msg.Metadata.Set(k, v)
		}
		values, err := streamq.DefaultMarshaler{}.Marshal(topic, msg)
		require.NoError(t, err)
		flat, err := retry.Flatten(values)
		require.NoError(t, err)
		return flat
	}
	item := func(it retry.Item) string {
		blob, err := it.Encode()
		require.NoError(t, err)
		return blob
	}
	raw := func(v any) string { // hand-built msgpack: non-string or missing fields
		blob, err := msgpack.Marshal(v)
		require.NoError(t, err)
		return string(blob)
	}
	const dropped = -1
	type row struct {
		name  string
		set   int                              // partition whose retry set holds the item
		blob  func(uuid string) (string, bool) // the item blob; false: none in the hash
		want  int                              // partition it is delivered on, or dropped
		check func(t *testing.T, d rtDelivery) // more checks on the delivery
	}
	good := func(p string) func(string) (string, bool) {
		return func(uuid string) (string, bool) {
			return item(retry.Item{Topic: topic, PartitionID: p, RetryCount: "1", MaxRetries: "3", Group: group, Fields: fields(uuid, nil)}), true
		}
	}
	rows := []row{
		{name: "partitionId abc in partition 1's set goes to partition 0", set: 1, want: 0, blob: good("abc")},
		{name: "partitionId out of range goes to partition 0", set: 1, want: 0, blob: good("5")},
		{name: "negative partitionId goes to partition 0", set: 1, want: 0, blob: good("-3")},
		{name: "fractional partitionId goes to partition 0", set: 1, want: 0, blob: good("1.5")},
		{name: "missing partitionId goes to partition 0", set: 1, want: 0, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": topic, "retryCount": "1", "fields": fields(uuid, nil)}), true
		}},
		{name: "numeric partitionId of its own set", set: 1, want: 1, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": topic, "partitionId": 1, "fields": fields(uuid, nil)}), true
		}},
		{name: "numeric partitionId of another partition", set: 1, want: 0, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": topic, "partitionId": 0, "fields": fields(uuid, nil)}), true
		}},
		{name: "retryCount NaN still moved", set: 0, want: 0, blob: func(uuid string) (string, bool) {
			return item(retry.Item{Topic: topic, PartitionID: "0", RetryCount: "NaN", MaxRetries: "NaN",
				Fields: fields(uuid, map[string]string{streamq.RetryCountMetadata: "NaN"})}), true
		}, check: func(t *testing.T, d rtDelivery) { assert.Zero(t, d.retries, "a bad x-retry-count reads as 0") }},
		{name: "retryCount not a string still moved", set: 0, want: 0, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": topic, "partitionId": "0", "retryCount": 2.5, "maxRetries": true, "fields": fields(uuid, nil)}), true
		}},
		{name: "empty topic dropped", set: 0, want: dropped, blob: func(uuid string) (string, bool) {
			return item(retry.Item{Topic: "", PartitionID: "0", RetryCount: "1", Fields: fields(uuid, nil)}), true
		}},
		{name: "missing topic dropped", set: 1, want: dropped, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"partitionId": "1", "fields": fields(uuid, nil)}), true
		}},
		{name: "topic not a string dropped", set: 0, want: dropped, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": 7, "partitionId": "0", "fields": fields(uuid, nil)}), true
		}},
		{name: "no fields dropped", set: 0, want: dropped, blob: func(string) (string, bool) {
			return item(retry.Item{Topic: topic, PartitionID: "0"}), true
		}},
		{name: "fields not a list dropped", set: 0, want: dropped, blob: func(uuid string) (string, bool) {
			return raw(map[string]any{"topic": topic, "partitionId": "0", "fields": map[string]string{streamq.UUIDField: uuid}}), true
		}},
		{name: "odd number of fields dropped", set: 0, want: dropped, blob: func(uuid string) (string, bool) {
			return item(retry.Item{Topic: topic, PartitionID: "0", Fields: fields(uuid, nil)[1:]}), true
		}},
		{name: "garbage blob dropped", set: 0, want: dropped, blob: func(string) (string, bool) { return "\xc1 not msgpack", true }},
		{name: "text blob dropped", set: 1, want: dropped, blob: func(string) (string, bool) { return "not msgpack", true }},
		{name: "msgpack array dropped", set: 1, want: dropped, blob: func(uuid string) (string, bool) {
			return raw([]any{topic, "1", fields(uuid, nil)}), true
		}},
		{name: "id without item dropped", set: 1, want: dropped, blob: func(string) (string, bool) { return "", false }},
		{name: "good item after the bad ones", set: 0, want: 0, blob: good("0")},
		{name: "good item of partition 1 after the bad ones", set: 1, want: 1, blob: good("1")},
	}

	uuids := make([]string, len(rows))
	base := time.Now().Add(-time.Second).UnixMilli()
	for i, r := range rows {
		uuids[i] = "mover-" + strconv.Itoa(i)
		rtPark(t, client, space.Retry(topic, r.set, group), space.RetryItems(topic, r.set, group), uuids[i], base+int64(i), r.blob)
	}

	delivered := func(i int) bool { return len(log.of(uuids[i], "")) > 0 }
	rtEventually(t, func() bool {
		for i, r := range rows {
			if r.want != dropped && !delivered(i) {
				return false
			}
		}
		return true
	}, 10*time.Second, log.dump)
	for p := 0; p < partitions; p++ {
		rtWaitEmpty(t, client, space.Retry(topic, p, group), space.RetryItems(topic, p, group))
	}
	total := log.len()
	require.Never(t, func() bool { return log.len() != total }, 300*time.Millisecond, 20*time.Millisecond,
		"a dropped item was delivered, or an item twice")

	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := log.of(uuids[i], "")
			if r.want == dropped {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, r.want, got[0].partition)
			assert.Equal(t, "payload of "+uuids[i], got[0].payload)
			if r.check != nil {
				r.check(t, got[0])
			}
		})
	}

	// The mover is still running: items parked later, in both kinds of set, are delivered.
	later := []struct {
		zset, items string
		uuid        string
		p           int
	}{
		{space.Retry(topic, 0, group), space.RetryItems(topic, 0, group), "later-retry-0", 0},
		{space.Retry(topic, 1, group), space.RetryItems(topic, 1, group), "later-retry-1", 1},
		{space.Delay(topic, 1), space.DelayItems(topic, 1), "later-delay-1", 1},
	}
	for _, l := range later {
		rtPark(t, client, l.zset, l.items, l.uuid, time.Now().UnixMilli(), func(uuid string) (string, bool) {
			return item(retry.Item{Topic: topic, PartitionID: strconv.Itoa(l.p), Fields: fields(uuid, nil)}), true
		})
	}
	require.Eventually(t, func() bool {
		for _, l := range later {
			if len(log.of(l.uuid, "")) == 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, 20*time.Millisecond, "items parked after the bad ones were not delivered")
	for _, l := range later {
		assert.Equal(t, l.p, log.of(l.uuid, "")[0].partition)
		rtWaitEmpty(t, client, l.zset, l.items)
	}
}

// rtPark writes one item (as blob returns it for uuid) into a retry or delay set, due at dueMs.
func rtPark(t *testing.T, client redis.UniversalClient, zset, items, uuid string, dueMs int64, blob func(string) (string, bool)) {
	t.Helper()
	ctx := context.Background()
	id := "item-" + uuid
	if b, ok := blob(uuid); ok {
		require.NoError(t, client.HSet(ctx, items, id, b).Err())
	}
	require.NoError(t, client.ZAdd(ctx, zset, redis.Z{Score: float64(dueMs), Member: id}).Err())
}

// rtWaitEmpty waits until a retry or delay set and its items hash are empty.
func rtWaitEmpty(t *testing.T, client redis.UniversalClient, zset, items string) {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		z, err1 := client.ZCard(ctx, zset).Result()
		h, err2 := client.HLen(ctx, items).Result()
		return err1 == nil && err2 == nil && z == 0 && h == 0
	}, 5*time.Second, 20*time.Millisecond, "%s (or its items) not emptied", zset)
}

// TestDelayedPublish: messages published with Watermill's delay metadata are parked in their
// partition's delay set and reach every group when due, not before; short delays are appended
// at once.
func TestDelayedPublish(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDelayedPublish)
}

func testDelayedPublish(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, partitions = "delayed", 4
	log := &rtLog{}
	groups := []string{"A", "B"}
	for _, g := range groups {
		_, ch := streamqtest.SubscribeMember(t, client, topic, g, "member-"+g, partitions, nil)
		rtHandle(ch, log, func(*message.Message, rtDelivery) bool { return true })
	}
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions})
	space := keys.New("", "")

	type row struct {
		name     string
		p        int
		delay    func(now time.Time) delay.Delay
		notEarly func(now time.Time, msg *message.Message) time.Time // earliest allowed delivery
		parked   bool
	}
	rows := []row{
		{name: "For 2s", p: 0, parked: true,
			delay:    func(time.Time) delay.Delay { return delay.For(2 * time.Second) },
			notEarly: func(now time.Time, _ *message.Message) time.Time { return now.Add(2 * time.Second) }},
		{name: "Until now+1500ms", p: 1, parked: true,
			delay:    func(now time.Time) delay.Delay { return delay.Until(now.Add(1500 * time.Millisecond)) },
			notEarly: func(now time.Time, _ *message.Message) time.Time { return now.Add(1500 * time.Millisecond) }},
		{name: "For 1500ms, not before _watermill_delayed_until", p: 2, parked: true,
			delay: func(time.Time) delay.Delay { return delay.For(1500 * time.Millisecond) },
			notEarly: func(_ time.Time, msg *message.Message) time.Time {
				until, err := time.Parse(time.RFC3339Nano, msg.Metadata.Get(delay.DelayedUntilKey))
				require.NoError(t, err)
				return until
			}},
		{name: "For 10ms appended at once", p: 3, parked: false,
			delay:    func(time.Time) delay.Delay { return delay.For(10 * time.Millisecond) },
			notEarly: func(now time.Time, _ *message.Message) time.Time { return now }},
	}
	msgs := make([]*message.Message, len(rows))
	published := make([]time.Time, len(rows))
	for i, r := range rows {
		msgs[i] = rtMessage(r.name)
		msgs[i].Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(r.p))
		published[i] = time.Now()
		delay.Message(msgs[i], r.delay(published[i]))
		require.NoError(t, pub.Publish(topic, msgs[i]))
		parked, err := client.ZCard(ctx, space.Delay(topic, r.p)).Result()
		require.NoError(t, err)
		appended, err := client.XLen(ctx, space.PartitionStream(topic, r.p)).Result()
		require.NoError(t, err)
		if r.parked {
			assert.Equal(t, int64(1), parked, "%s: parked in the delay set", r.name)
			assert.Zero(t, appended, "%s: not appended yet", r.name)
		} else {
			assert.Zero(t, parked, "%s: no delay-set entry", r.name)
			assert.Equal(t, int64(1), appended, "%s: appended directly", r.name)
		}
	}

	rtEventually(t, func() bool {
		for _, m := range msgs {
			for _, g := range groups {
				if len(log.of(m.UUID, g)) == 0 {
					return false
				}
			}
		}
		return true
	}, 10*time.Second, log.dump)

	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			earliest := r.notEarly(published[i], msgs[i])
			for _, g := range groups {
				got := log.of(msgs[i].UUID, g)
				require.Len(t, got, 1, "group %s", g)
				assert.Equal(t, r.p, got[0].partition)
				t.Logf("group %s: delivered %s after publish", g, got[0].at.Sub(published[i]))
				assert.False(t, got[0].at.Before(earliest.Add(-clockSlack)),
					"group %s got it %s before it was due", g, earliest.Sub(got[0].at))
			}
		})
	}
	for p := 0; p < partitions; p++ {
		rtWaitEmpty(t, client, space.Delay(topic, p), space.DelayItems(topic, p))
	}
}

// TestDelayedMessagesOfOneKeyKeepTheirOrder: messages of one key published with the same
// delay, in one Publish call and in back-to-back calls, fall due in the same millisecond
// often; they arrive in publish order (a random tie-break would show within a few rounds:
// ten in one call come in order by chance once in 3.6 million), and none arrives early.
// Retries parked in the same millisecond keep their order the same way.
func TestDelayedMessagesOfOneKeyKeepTheirOrder(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDelayedMessagesOfOneKeyKeepTheirOrder)
}

func testDelayedMessagesOfOneKeyKeepTheirOrder(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, rounds = "delayed-order", 3
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	type sent struct {
		seq int
		at  time.Time
	}
	for round := 0; round < rounds; round++ {
		var order []sent
		batch := make([]*message.Message, 10)
		for i := range batch {
			batch[i] = rtMessage("m")
			batch[i].Metadata.Set("seq", strconv.Itoa(i))
			batch[i].Metadata.Set(streamq.PartitionKeyMetadata, "one-key")
			delay.Message(batch[i], delay.For(1500*time.Millisecond))
		}
		now := time.Now()
		require.NoError(t, pub.Publish(topic, batch...), "one call")
		for i := range batch {
			order = append(order, sent{i, now})
		}
		for i := 10; i < 20; i++ {
			m := rtMessage("m")
			m.Metadata.Set("seq", strconv.Itoa(i))
			m.Metadata.Set(streamq.PartitionKeyMetadata, "one-key")
			delay.Message(m, delay.For(1500*time.Millisecond))
			at := time.Now()
			require.NoError(t, pub.Publish(topic, m), "back-to-back calls")
			order = append(order, sent{i, at})
		}
		for _, want := range order {
			m := nextMsg(t, ch, 10*time.Second)
			got, _ := strconv.Atoi(m.Metadata.Get("seq"))
			require.Equal(t, want.seq, got, "round %d: delivered out of publish order", round)
			assert.False(t, time.Now().Before(want.at.Add(1500*time.Millisecond-clockSlack)), "round %d: seq %d early", round, got)
			m.Ack()
		}
	}
}

// TestParkedRetriesOfOneKeyKeepTheirOrder: retries parked with the same backoff, often in the
// same millisecond (each nack is settled before the next message is delivered), are appended in
// the order they were parked.
func TestParkedRetriesOfOneKeyKeepTheirOrder(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testParkedRetriesOfOneKeyKeepTheirOrder)
}

func testParkedRetriesOfOneKeyKeepTheirOrder(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	const topic, n = "retry-order", 20
	cfg := streamqtest.FastSub(client, "g")
	cfg.Retry.Policy = streamq.ExponentialBackoff{Base: 300 * time.Millisecond, Max: 300 * time.Millisecond, Attempts: 1}
	sub := streamqtest.NewSubscriber(t, cfg)
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	require.NoError(t, pub.Publish(topic, seqMessages(0, n, nil)...))
	var retried []int
	for len(retried) < n {
		m := nextMsg(t, ch, 10*time.Second)
		seq, _ := strconv.Atoi(m.Metadata.Get("seq"))
		if m.Metadata.Get(streamq.RetryCountMetadata) == "" {
			m.Nack()
			continue
		}
		retried = append(retried, seq)
		m.Ack()
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, retried, "retries appended out of the order they were parked")
}
