// Package fulltest builds the scenes of a full Redis that the operators' tools (admin, the
// CLI, the dashboard, the browser tests) are tested on: memory held back by two topics and
// three groups, one of them the cause; a downstream outage; a Redis filled to maxmemory. Only
// tests import it.
package fulltest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/server"
)

// fillMargin is how far below the used memory Fill sets maxmemory: used memory moves a little
// as clients come and go, and a Redis only just at its limit takes a small write now and then.
const fillMargin = 256 << 10

// Fill sets maxmemory (noeviction) just below the server's used memory: Redis is at
// maxmemory and refuses every command that adds memory. It is undone at cleanup.
func Fill(t testing.TB, client *redis.Client) {
	t.Helper()
	ctx := context.Background()
	m := server.ReadMemory(ctx, client)
	require.Len(t, m, 1)
	require.NoError(t, m[0].Err)
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(max(m[0].Used-fillMargin, 1), 10)).Err())
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
	err := client.Set(ctx, "fulltest:probe", strings.Repeat("x", 1024), 0).Err()
	require.True(t, redis.HasErrorPrefix(err, "OOM"), "Redis must refuse writes at maxmemory: %v", err)
}

// HighWater sets maxmemory (noeviction) so that the used memory is 90 % of it: above the
// default high-water mark (80 %), below maxmemory. It is undone at cleanup.
func HighWater(t testing.TB, client *redis.Client) {
	t.Helper()
	ctx := context.Background()
	m := server.ReadMemory(ctx, client)
	require.Len(t, m, 1)
	require.NoError(t, m[0].Err)
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(m[0].Used*10/9, 10)).Err())
	t.Cleanup(func() { _ = client.ConfigSet(context.Background(), "maxmemory", "0").Err() })
}

// Names of the memory scene.
const (
	Orders  = "orders"  // 2 partitions, OrdersCount messages of OrderSize bytes
	Events  = "events"  // 1 partition, EventsCount small messages
	Audit   = "audit"   // group of Orders that never consumed: it holds back everything (the cause)
	Billing = "billing" // group of Orders that consumed everything: it holds back nothing
	Mailer  = "mailer"  // group of Events that stopped: MailerBehind unacked, MailerRetries retries waiting
)

// Sizes of the memory scene.
const (
	OrdersCount   = 400
	OrderSize     = 2048
	EventsCount   = 200
	MailerRead    = 102 // Events messages Mailer was delivered: 100 acked, 2 nacked (retries waiting)
	MailerBehind  = EventsCount - MailerRead
	MailerRetries = 2
	DeadLetters   = 3 // dead letters of Events
)

// MemoryScene sets up two topics and three groups: Orders, whose group Audit never consumed
// its OrdersCount messages of OrderSize bytes (the group holding the memory) while Billing
// consumed them all; Events, whose group Mailer was delivered MailerRead messages (it acked
// all but MailerRetries, which wait as retries an hour away) then stopped, with MailerBehind
// messages left and DeadLetters dead letters. No member is left running.
func MemoryScene(t testing.TB, client *redis.Client, pub *streamq.Publisher) {
	t.Helper()
	ctx := context.Background()
	space := keys.New("", "")
	adm, err := admin.New(client, admin.Options{})
	require.NoError(t, err)
	require.NoError(t, adm.CreateTopic(ctx, Orders, 2))
	require.NoError(t, adm.CreateTopic(ctx, Events, 1))
	publish(t, pub, Orders, OrdersCount, OrderSize, 2)
	for p := range 2 {
		require.NoError(t, client.XGroupCreateMkStream(ctx, space.PartitionStream(Orders, p), Audit, "0-0").Err())
	}
	run(t, client, Orders, Billing, 2, OrdersCount, func(*message.Message, int) bool { return true })
	publish(t, pub, Events, MailerRead, 64, 1)
	run(t, client, Events, Mailer, 1, MailerRead, func(_ *message.Message, n int) bool { return n <= MailerRead-MailerRetries })
	publish(t, pub, Events, MailerBehind, 64, 1)
	dlq := space.DLQ(Events, 0)
	for i := range DeadLetters {
		require.NoError(t, client.XAdd(ctx, &redis.XAddArgs{Stream: dlq, Values: []any{"reason", "bad " + strconv.Itoa(i), "group", Mailer}}).Err())
	}
}

// publish publishes n messages of size bytes to topic (parts partitions), round robin.
func publish(t testing.TB, pub *streamq.Publisher, topic string, n, size, parts int) {
	t.Helper()
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), []byte(strings.Repeat("o", size)))
		msgs[i].Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(i%parts))
	}
	require.NoError(t, pub.Publish(topic, msgs...))
}

// run runs a member of group on topic until n messages were delivered, acking those ack
// says (the n-th delivery counted from 1) and nacking the others (retried an hour later), and
// closes it.
func run(t testing.TB, client *redis.Client, topic, group string, parts, n int, ack func(*message.Message, int) bool) {
	t.Helper()
	sub, err := streamq.NewSubscriber(Config(client, group, parts), watermill.NopLogger{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	for i := 1; i <= n; i++ {
		select {
		case m := <-ch:
			if ack(m, i) {
				m.Ack()
			} else {
				m.Nack()
			}
		case <-ctx.Done():
			t.Fatalf("%s delivered %d of %d messages of %s", group, i-1, n, topic)
		}
	}
	require.NoError(t, sub.Close())
}

// Config is a quick member of group on a topic of parts partitions: short leases and
// rebalances, one retry an hour after a nack.
func Config(client redis.UniversalClient, group string, parts int) streamq.SubscriberConfig {
	return streamq.SubscriberConfig{
		Client: client, ConsumerGroup: group, DefaultPartitionCount: parts,
		Membership: streamq.MembershipConfig{LeaseTTL: 2 * time.Second, RenewInterval: 300 * time.Millisecond, RebalanceInterval: 150 * time.Millisecond},
		Read:       streamq.ReadConfig{BlockTime: 50 * time.Millisecond},
		Delivery:   streamq.DeliveryConfig{CloseTimeout: 2 * time.Second},
		Retry:      streamq.RetryConfig{Policy: streamq.ExponentialBackoff{Base: time.Hour, Max: time.Hour, Attempts: 3}, MoverInterval: 100 * time.Millisecond},
	}
}

// Outage runs a member of group on topic whose handler marks every delivery as a downstream
// outage (streamq.Outage with reason) until the test ends; it returns the Subscriber.
func Outage(t testing.TB, client *redis.Client, topic, group, reason string) *streamq.Subscriber {
	t.Helper()
	cfg := Config(client, group, 1)
	cfg.Retry.Outage = streamq.OutageConfig{Backoff: 200 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}
	sub, err := streamq.NewSubscriber(cfg, watermill.NopLogger{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			_ = streamq.Outage(m, errors.New(reason))
			m.Nack()
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = sub.Close()
		wg.Wait()
	})
	return sub
}
