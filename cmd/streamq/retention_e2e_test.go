package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// The scenario of admin's TestRetentionHeldBySlowGroup: one partition, 100 messages published
// without length retention, group "slow" acks 50 and leaves, group "fast" acks everything and
// keeps running, then a Publisher records MaxLen 10: "slow" holds back 41 entries.
const (
	retainedTopic = "retained"
	retainedHeld  = 41 // 51 entries from slow's position on, 10 of them within max length
)

// TestCLIStatsHoldsBack: stats names the count of entries over max length the stopped group
// holds back (a HOLDS BACK column, only then, and holdsBack in --json), info the holder; once
// delete-group removes it, the partition shrinks to max length. On a single redis-server and
// on a 3-master cluster.
func TestCLIStatsHoldsBack(t *testing.T) {
	for name, start := range map[string]func(t *testing.T) (redis.UniversalClient, string){
		"single": func(t *testing.T) (redis.UniversalClient, string) {
			srv := redistest.Start(t)
			return srv.Client(t), srv.URL()
		},
		"cluster": func(t *testing.T) (redis.UniversalClient, string) {
			c := redistest.StartCluster(t, 3, 0)
			return c.Client(t), strings.Join(c.Addrs(), ",")
		},
	} {
		t.Run(name, func(t *testing.T) {
			client, url := start(t)
			adm, err := admin.New(client, admin.Options{})
			require.NoError(t, err)
			e := &cliEnv{t: t, ctx: context.Background(), url: url, adm: adm}
			retainedHeldBySlow(t, client)
			requireStatsHoldsBack(e)
			e.ok("delete-group", retainedTopic, "slow", "--yes")
			require.Eventually(t, func() bool {
				var info infoView
				e.jsonOf(&info, "info", retainedTopic)
				return info.Length == 10 && info.PerPartition[0].Holder == ""
			}, 10*time.Second, 50*time.Millisecond, "the partition never shrank to max length")
		})
	}
}

// requireStatsHoldsBack checks stats of "slow" (the holder) and "fast", and info.
func requireStatsHoldsBack(e *cliEnv) {
	t := e.t
	t.Helper()
	out := e.ok("stats", retainedTopic, "slow")
	assert.Regexp(t, `(?m)^PARTITION\s+PENDING.*OWNER\s+HOLDS BACK$`, out)
	assert.Regexp(t, `(?m)^PARTITION\s+PENDING.*FRONTIER\s+HOLDS BACK$`, e.ok("stats", retainedTopic, "slow", "-o", "wide"))
	assert.Regexp(t, `(?m)^0\s+.*\s+`+strconv.Itoa(retainedHeld)+`$`, out)
	assert.Regexp(t, `(?m)^TOTAL\s+.*\s+`+strconv.Itoa(retainedHeld)+`$`, out)
	var got statsView
	raw := e.jsonOf(&got, "stats", retainedTopic, "slow")
	requireKeys(t, raw, "holdsBack")
	var obj struct{ Partitions []json.RawMessage }
	require.NoError(t, json.Unmarshal(raw, &obj))
	requireKeys(t, obj.Partitions[0], "holdsBack")
	assert.Equal(t, int64(retainedHeld), got.HoldsBack)
	require.Len(t, got.Partitions, 1)
	assert.Equal(t, int64(retainedHeld), got.Partitions[0].HoldsBack)

	out = e.ok("stats", retainedTopic, "fast")
	assert.NotContains(t, out, "HOLDS BACK", "fast holds nothing back: no column")
	e.jsonOf(&got, "stats", retainedTopic, "fast")
	assert.Zero(t, got.HoldsBack)

	var info infoView
	e.jsonOf(&info, "info", retainedTopic)
	assert.Equal(t, int64(retainedHeld), info.OverMaxLen)
	assert.Equal(t, "slow", info.PerPartition[0].Holder)
	assert.Equal(t, int64(retainedHeld), info.PerPartition[0].HeldBack)
}

// retainedHeldBySlow runs the scenario until the trim stopped at slow's position.
func retainedHeldBySlow(t *testing.T, client redis.UniversalClient) {
	t.Helper()
	unbounded := retainedPublisher(t, client, streamq.PublisherConfig{Trim: streamq.TrimConfig{MaxLen: -1}})
	for i := range 100 {
		require.NoError(t, unbounded.Publish(retainedTopic, message.NewMessage(watermill.NewUUID(), []byte(strconv.Itoa(i)))))
	}
	sub, ch := retainedSubscriber(t, client, "slow")
	for range 50 {
		select {
		case m := <-ch:
			m.Ack()
		case <-time.After(30 * time.Second):
			t.Fatal("group slow did not get its 50 messages")
		}
	}
	require.NoError(t, sub.Close())
	var acked atomic.Int64
	_, ch = retainedSubscriber(t, client, "fast")
	go func() {
		for m := range ch { // until the Subscriber closes at cleanup
			m.Ack()
			acked.Add(1)
		}
	}()
	bounded := retainedPublisher(t, client, streamq.PublisherConfig{Trim: streamq.TrimConfig{MaxLen: 10, Exact: true}})
	require.NoError(t, bounded.Publish(retainedTopic, message.NewMessage(watermill.NewUUID(), []byte("100"))))
	require.Eventually(t, func() bool {
		n, err := client.XLen(context.Background(), keys.New("", "").PartitionStream(retainedTopic, 0)).Result()
		return err == nil && acked.Load() == 101 && n == 51
	}, 30*time.Second, 20*time.Millisecond, "the trim never stopped at slow's position")
}

// retainedPublisher is a Publisher of the one-partition topic, closed at cleanup.
func retainedPublisher(t *testing.T, client redis.UniversalClient, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	cfg.Client, cfg.DefaultPartitionCount = client, 1
	pub, err := streamq.NewPublisher(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

// retainedSubscriber subscribes group to the topic (trim every 200ms, metadata re-read every
// 100ms); the Subscriber is closed at cleanup too.
func retainedSubscriber(t *testing.T, client redis.UniversalClient, group string) (*streamq.Subscriber, <-chan *message.Message) {
	t.Helper()
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: 1,
		Membership: streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond, PartitionRefreshInterval: 100 * time.Millisecond},
		Read:       streamq.ReadConfig{BlockTime: 50 * time.Millisecond}, Delivery: streamq.DeliveryConfig{CloseTimeout: 500 * time.Millisecond},
		Retention: streamq.RetentionConfig{TrimInterval: 200 * time.Millisecond},
	}, watermill.NopLogger{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	ch, err := sub.Subscribe(context.Background(), retainedTopic)
	require.NoError(t, err)
	return sub, ch
}
