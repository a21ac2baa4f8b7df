package admin_test

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// dtSub is a subscriber config with short intervals for the DeleteTopic tests.
func dtSub(client redis.UniversalClient, group string, partitions int) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client:                client,
		ConsumerGroup:         group,
		DefaultPartitionCount: partitions,
		Membership:            streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Read:                  streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:              streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:                 streamq.RetryConfig{MoverInterval: 100 * time.Millisecond},
	}
}

// dtMsg is a message forced onto partition p; mode "dead" or "retry" tells the handler of
// TestDeleteTopicRemovesEveryKey to dead-letter or nack it.
func dtMsg(p int, mode string) *message.Message {
	m := message.NewMessage(watermill.NewUUID(), []byte("payload-"+mode))
	m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
	if mode != "" {
		m.Metadata.Set("mode", mode)
	}
	return m
}

// dtKeys returns every key of the server, sorted.
func dtKeys(t *testing.T, client redis.UniversalClient) []string {
	t.Helper()
	var out []string
	iter := client.Scan(context.Background(), 0, "*", 1000).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, iter.Val())
	}
	require.NoError(t, iter.Err())
	sort.Strings(out)
	return out
}

// dtTopicKeys returns the keys that carry topic's hash tags: {topic} or {topic:p:N}.
func dtTopicKeys(t *testing.T, client redis.UniversalClient, topic string) []string {
	t.Helper()
	var out []string
	for _, k := range dtKeys(t, client) {
		if carriesTag(k, topic) {
			out = append(out, k)
		}
	}
	return out
}

// carriesTag reports whether key k contains topic's hash tag {topic} or {topic:p:N}.
func carriesTag(k, topic string) bool {
	return regexp.MustCompile(`\{` + regexp.QuoteMeta(topic) + `(:p:\d+)?\}`).MatchString(k)
}

// dtDump returns key -> DUMP of every key of topic, to prove another topic is untouched.
func dtDump(t *testing.T, client redis.UniversalClient, topic string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range dtTopicKeys(t, client, topic) {
		v, err := client.Dump(context.Background(), k).Result()
		require.NoError(t, err, k)
		out[k] = v
	}
	return out
}

func dtExists(t *testing.T, client redis.UniversalClient, key string) bool {
	t.Helper()
	n, err := client.Exists(context.Background(), key).Result()
	require.NoError(t, err)
	return n == 1
}

func TestDeleteTopicRemovesEveryKey(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	space := keys.New("", "")
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	const topic, other = "doomed", "survivor"

	// Another topic with data, a group and a commit frontier: it must be untouched.
	otherPub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2}, nil)
	require.NoError(t, err)
	require.NoError(t, otherPub.Publish(other, dtMsg(0, ""), dtMsg(1, ""), dtMsg(1, "")))
	otherSub, err := streamq.NewSubscriber(dtSub(client, "g1", 2), nil)
	require.NoError(t, err)
	otherCh, err := otherSub.Subscribe(ctx, other)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		select {
		case m := <-otherCh:
			m.Ack()
		case <-time.After(10 * time.Second):
			t.Fatal("the other topic's messages were not delivered")
		}
	}
	require.Eventually(t, func() bool {
		n, err := client.HLen(ctx, space.Commit(other, 1)).Result()
		return err == nil && n == 1
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, otherSub.Close())

	// g2 exists on every partition and never acks, so g1's all-groups-ack sets stay.
	g2, err := streamq.NewSubscriber(dtSub(client, "g2", 4), nil)
	require.NoError(t, err)
	require.NoError(t, g2.SubscribeInitialize(topic))
	require.NoError(t, g2.Close())

	// g1 acks, dead-letters and parks a retry for 10s.
	cfg := dtSub(client, "g1", 4)
	cfg.Acks.DeletePolicy = streamq.AckDeleteAllGroups
	cfg.Retry.Policy = streamq.ExponentialBackoff{Base: 10 * time.Second, Max: 10 * time.Second, Attempts: 3}
	g1, err := streamq.NewSubscriber(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g1.Close() })
	ch, err := g1.Subscribe(ctx, topic)
	require.NoError(t, err)
	go func() {
		for m := range ch {
			switch m.Metadata.Get("mode") {
			case "dead":
				_ = streamq.DeadLetter(m, errors.New("poison"))
				m.Nack()
			case "retry":
				m.Nack()
			default:
				m.Ack()
			}
		}
	}()
	msgs := []*message.Message{dtMsg(1, "dead"), dtMsg(2, "retry")}
	for p := 0; p < 4; p++ {
		msgs = append(msgs, dtMsg(p, ""), dtMsg(p, ""))
	}
	require.NoError(t, pub.Publish(topic, msgs...))
	retryKey := space.Retry(topic, 2, "g1")
	require.Eventually(t, func() bool {
		n, err := client.ZCard(ctx, retryKey).Result()
		if err != nil || n != 1 || !dtExists(t, client, space.DLQ(topic, 1)) {
			return false
		}
		for p := 0; p < 4; p++ {
			if c, err := client.HGet(ctx, space.Commit(topic, p), "g1").Result(); err != nil || c == "" {
				return false
			}
		}
		return true
	}, 15*time.Second, 20*time.Millisecond, "dead letter, parked retry and commit frontiers of g1")
	require.NoError(t, g1.Close())

	// g3 dies without releasing anything: its client is closed under it, so its leases and
	// membership stay behind (lease TTL 30s).
	crashClient := srv.Client(t)
	cfg3 := dtSub(crashClient, "g3", 4)
	cfg3.Membership.LeaseTTL = 30 * time.Second
	g3, err := streamq.NewSubscriber(cfg3, nil)
	require.NoError(t, err)
	ch3, err := g3.Subscribe(ctx, topic)
	require.NoError(t, err)
	go func() {
		for m := range ch3 {
			m.Ack()
		}
	}()
	require.Eventually(t, func() bool {
		for p := 0; p < 4; p++ {
			if !dtExists(t, client, space.Lease(topic, p, "g3")) {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "g3 leases every partition")
	require.NoError(t, crashClient.Close())
	require.NoError(t, g3.Close())
	// Its heartbeat expires (LeaseTTL after the crash, 30s): then it is no live member, which
	// would refuse the delete. Expire it now; its membership keys stay behind.
	g3Members, err := client.ZRange(ctx, space.Members(topic, "g3"), 0, -1).Result()
	require.NoError(t, err)
	require.NotEmpty(t, g3Members)
	for _, m := range g3Members {
		require.NoError(t, client.ZAddXX(ctx, space.Members(topic, "g3"), redis.Z{Score: 1, Member: m}).Err())
	}

	// An offloaded payload nobody acked yet, and a message delayed by an hour.
	big := message.NewMessage(watermill.NewUUID(), []byte(strings.Repeat("B", 80_000)))
	big.Metadata.Set(streamq.ForcePartitionMetadata, "3")
	delayed := dtMsg(0, "")
	delay.Message(delayed, delay.For(time.Hour))
	require.NoError(t, pub.Publish(topic, big, delayed))
	last, err := client.XRevRangeN(ctx, space.PartitionStream(topic, 3), "+", "-", 1).Result()
	require.NoError(t, err)
	ref, _ := last[0].Values["x-payload-hash-ref"].(string)
	require.NotEmpty(t, ref, "the big message is offloaded")
	payloadKey := space.Payload(topic, 3, ref)

	// Every kind of key of the topic is there before the delete.
	mustExist := []string{
		space.Meta(topic), space.Partitions(topic), space.Registry(),
		space.DLQ(topic, 1), retryKey, space.RetryItems(topic, 2, "g1"),
		space.Delay(topic, 0), space.DelayItems(topic, 0),
		payloadKey, space.PayloadIndex(topic, 3),
		space.Members(topic, "g3"), space.MemberCaps(topic, "g3"),
	}
	for p := 0; p < 4; p++ {
		mustExist = append(mustExist, space.PartitionStream(topic, p), space.Lease(topic, p, "g3"), space.Commit(topic, p))
	}
	for _, k := range mustExist {
		assert.True(t, dtExists(t, client, k), "missing before DeleteTopic: %s", k)
	}
	ackSets, err := client.Keys(ctx, space.Control+":acks:*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, ackSets, "g1's all-groups-ack sets")
	for _, k := range ackSets {
		members, err := client.SMembers(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"g1"}, members, k)
	}
	before := dtTopicKeys(t, client, topic)
	otherBefore := dtDump(t, client, other)
	require.NotEmpty(t, otherBefore)

	deleted, err := adm.DeleteTopic(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, topic, deleted.Topic)
	require.NotEmpty(t, deleted.Keys)
	assert.ElementsMatch(t, before, deleted.Keys, "Deleted.Keys lists exactly the topic's keys")
	assert.Contains(t, deleted.Keys, payloadKey)

	for _, k := range dtKeys(t, client) {
		assert.False(t, carriesTag(k, topic), "key of the deleted topic left behind: %s", k)
	}
	registered, err := client.SIsMember(ctx, space.Registry(), topic).Result()
	require.NoError(t, err)
	assert.False(t, registered, "the topic is still registered")
	topics, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{other}, topics)
	assert.Equal(t, otherBefore, dtDump(t, client, other), "the other topic's keys changed")

	_, err = adm.DeleteTopic(ctx, topic)
	assert.True(t, errors.Is(err, admin.ErrTopicNotFound), "deleting it again: %v", err)
	_, err = adm.DeleteTopic(ctx, "never-existed")
	assert.True(t, errors.Is(err, admin.ErrTopicNotFound), "unknown topic: %v", err)
}

// dtCreate registers topics with partitions and gives each partition an entry, a consumer
// group and a commit frontier, through a publisher and a subscriber.
func dtCreate(t *testing.T, client redis.UniversalClient, partitions int, topics ...string) {
	t.Helper()
	ctx := context.Background()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: partitions}, nil)
	require.NoError(t, err)
	defer func() { _ = pub.Close() }()
	for _, topic := range topics {
		var msgs []*message.Message
		for p := 0; p < partitions; p++ {
			msgs = append(msgs, dtMsg(p, ""))
		}
		require.NoError(t, pub.Publish(topic, msgs...), topic)
		sub, err := streamq.NewSubscriber(dtSub(client, "g", partitions), nil)
		require.NoError(t, err)
		ch, err := sub.Subscribe(ctx, topic)
		require.NoError(t, err)
		for p := 0; p < partitions; p++ {
			select {
			case m := <-ch:
				m.Ack()
			case <-time.After(10 * time.Second):
				t.Fatalf("topic %q: message not delivered", topic)
			}
		}
		space := keys.New("", "")
		require.Eventually(t, func() bool {
			for p := 0; p < partitions; p++ {
				if !dtExists(t, client, space.Commit(topic, p)) {
					return false
				}
			}
			return true
		}, 10*time.Second, 10*time.Millisecond, "acks of %q", topic)
		require.NoError(t, sub.Close())
	}
}

func TestDeleteTopicGlobCharactersDeleteOnlyTheirOwnKeys(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	// "a*b" as a glob would match every one of the others.
	survivors := []string{"axb", "aXYZb", "a*bc", "a*b:x", `a\*b`, "a?b"}
	dtCreate(t, client, 2, append([]string{"a*b"}, survivors...)...)
	before := map[string]map[string]string{}
	for _, s := range survivors {
		before[s] = dtDump(t, client, s)
		require.NotEmpty(t, before[s], s)
	}
	require.NotEmpty(t, dtTopicKeys(t, client, "a*b"))

	deleted, err := adm.DeleteTopic(ctx, "a*b")
	require.NoError(t, err)
	assert.NotEmpty(t, deleted.Keys)
	for _, k := range deleted.Keys {
		assert.True(t, carriesTag(k, "a*b"), "DeleteTopic(a*b) deleted %s", k)
	}
	assert.Empty(t, dtTopicKeys(t, client, "a*b"))
	for _, s := range survivors {
		assert.Equal(t, before[s], dtDump(t, client, s), "keys of %q changed", s)
	}
	topics, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, survivors, topics)
}

// A topic named like another topic's partition tag ("a:p:1" vs partition 1 of "a") must not
// take the other topic's keys with it, in either direction.
func TestDeleteTopicPartitionTagLookalike(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ doomed, survivor string }{
		{doomed: "a:p:1", survivor: "a"},
		{doomed: "a", survivor: "a:p:1"},
	} {
		t.Run(tc.doomed, func(t *testing.T) {
			srv := redistest.Start(t)
			client := srv.Client(t)
			ctx := context.Background()
			adm, err := admin.New(client, admin.Options{})
			require.NoError(t, err)
			dtCreate(t, client, 2, "a", "a:p:1")
			survivorKeys := map[string]bool{}
			space := keys.New("", "")
			ownKeys := func(topic string) []string {
				out := []string{space.Meta(topic), space.Partitions(topic)}
				for p := 0; p < 2; p++ {
					out = append(out, space.PartitionStream(topic, p), space.Commit(topic, p))
				}
				return out
			}
			for _, k := range ownKeys(tc.survivor) {
				require.True(t, dtExists(t, client, k), k)
				survivorKeys[k] = true
			}
			deleted, err := adm.DeleteTopic(ctx, tc.doomed)
			require.NoError(t, err)
			for _, k := range deleted.Keys {
				assert.False(t, survivorKeys[k], "DeleteTopic(%q) deleted %s, a key of topic %q", tc.doomed, k, tc.survivor)
			}
			for _, k := range ownKeys(tc.survivor) {
				assert.True(t, dtExists(t, client, k), "key of %q gone after DeleteTopic(%q): %s", tc.survivor, tc.doomed, k)
			}
			for _, k := range ownKeys(tc.doomed) {
				assert.False(t, dtExists(t, client, k), "key of %q left after its DeleteTopic: %s", tc.doomed, k)
			}
		})
	}
}
