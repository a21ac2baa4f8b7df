package streamq_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
)

// unusedClient is a client that is never connected: constructors must not touch Redis.
func unusedClient(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// requireSubscriberRejected: NewSubscriber refuses cfg with an error matching every one of
// want, and returns no Subscriber.
func requireSubscriberRejected(t *testing.T, cfg streamq.SubscriberConfig, want []error) {
	t.Helper()
	sub, err := streamq.NewSubscriber(cfg, nil)
	require.Error(t, err)
	assert.Nil(t, sub)
	for _, w := range want {
		assert.ErrorIs(t, err, w)
	}
}

func TestSubscriberConfigRejects(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	cfg := func(edit func(*streamq.SubscriberConfig)) streamq.SubscriberConfig {
		c := streamq.SubscriberConfig{Client: client}
		edit(&c)
		return c
	}
	invalid := []error{streamq.ErrInvalidConfig}
	badName := []error{streamq.ErrInvalidConfig, streamq.ErrInvalidName}
	tests := []struct {
		name  string
		input streamq.SubscriberConfig
		want  []error
	}{
		{name: "nil client", input: streamq.SubscriberConfig{}, want: invalid},
		{name: "nil client with fields", input: cfg(func(c *streamq.SubscriberConfig) { c.Client = nil; c.ConsumerGroup = "g" }), want: invalid},
		{name: "negative DefaultPartitionCount", input: cfg(func(c *streamq.SubscriberConfig) { c.DefaultPartitionCount = -1 }), want: invalid},
		{name: "unknown TrimPolicy", input: cfg(func(c *streamq.SubscriberConfig) { c.Retention.Policy = "sometimes" }), want: invalid},
		{name: "Retry.MaxRetries -3", input: cfg(func(c *streamq.SubscriberConfig) { c.Retry.MaxRetries = -3 }), want: invalid},
		{name: "negative BatchCount", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.BatchCount = -1 }), want: invalid},
		{name: "negative Reclaim.BatchSize", input: cfg(func(c *streamq.SubscriberConfig) { c.Reclaim.BatchSize = -5 }), want: invalid},
		{name: "negative MaxInFlightPerPartition", input: cfg(func(c *streamq.SubscriberConfig) { c.Delivery.MaxInFlightPerPartition = -1 }), want: invalid},
		{name: "negative MaxLeasedPartitions", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.MaxLeasedPartitions = -1 }), want: invalid},
		{name: "negative MaxInFlight", input: cfg(func(c *streamq.SubscriberConfig) { c.Delivery.MaxInFlight = -1 }), want: invalid},
		{name: "negative Acks.BatchSize", input: cfg(func(c *streamq.SubscriberConfig) { c.Acks.BatchSize = -1 }), want: invalid},
		{name: "negative BlockTime", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.BlockTime = -time.Millisecond }), want: invalid},
		{name: "negative LeaseTTL", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.LeaseTTL = -time.Second }), want: invalid},
		{name: "negative RenewInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.RenewInterval = -time.Second }), want: invalid},
		{name: "negative RebalanceInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.RebalanceInterval = -time.Second }), want: invalid},
		{name: "negative Reclaim.ScanInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Reclaim.ScanInterval = -time.Second }), want: invalid},
		{name: "negative Reclaim.Idle", input: cfg(func(c *streamq.SubscriberConfig) { c.Reclaim.Idle = -time.Second }), want: invalid},
		{name: "negative Acks.FlushInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Acks.FlushInterval = -time.Millisecond }), want: invalid},
		{name: "negative CloseTimeout", input: cfg(func(c *streamq.SubscriberConfig) { c.Delivery.CloseTimeout = -time.Second }), want: invalid},
		{name: "negative PartitionRefreshInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.PartitionRefreshInterval = -time.Second }), want: invalid},
		{name: "negative StaticMemberGrace", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.ConsumerName = "a"
			c.Membership.StaticMemberGrace = -time.Second
		}), want: invalid},
		{name: "StaticMemberGrace below LeaseTTL", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.ConsumerName = "a"
			c.Membership.StaticMemberGrace = 9 * time.Second
		}), want: invalid},
		{name: "StaticMemberGrace with a generated name", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.StaticMemberGrace = time.Minute }), want: invalid},
		{name: "GroupExpiry -2ns", input: cfg(func(c *streamq.SubscriberConfig) { c.Retention.GroupExpiry = -2 }), want: invalid},
		{name: "GroupExpiry under 1s", input: cfg(func(c *streamq.SubscriberConfig) { c.Retention.GroupExpiry = time.Millisecond }), want: invalid},
		{name: "GroupExpiry under twice TrimInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Retention.GroupExpiry = 90 * time.Second }), want: invalid},
		{name: "group with open brace", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "g{1" }), want: badName},
		{name: "group with close brace", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "g}1" }), want: badName},
		{name: "group with space", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "my group" }), want: badName},
		{name: "group with tab", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "my\tgroup" }), want: badName},
		{name: "group with control char", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "g\x01" }), want: badName},
		{name: "group with DEL", input: cfg(func(c *streamq.SubscriberConfig) { c.ConsumerGroup = "g\x7f" }), want: badName},
		{name: "consumer with braces", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.ConsumerName = "{c}" }), want: badName},
		{name: "consumer with newline", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.ConsumerName = "c\n" }), want: badName},
		{name: "consumer prefix with brace", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.ConsumerNamePrefix = "svc{" }), want: badName},
		{name: "remainder equal to modulo", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 2 }), want: invalid},
		{name: "remainder above modulo", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, 5 }), want: invalid},
		{name: "remainder without modulo", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.PartitionRemainder = 1 }), want: invalid},
		{name: "negative modulo", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo = -2 }), want: invalid},
		{name: "negative remainder", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.PartitionModulo, c.Read.PartitionRemainder = 2, -1 }), want: invalid},
		{name: "LeaseTTL equal to RenewInterval", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.LeaseTTL, c.Membership.RenewInterval = time.Second, time.Second
		}), want: invalid},
		{name: "LeaseTTL below default RenewInterval", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.LeaseTTL = time.Second }), want: invalid},
		{name: "LeaseTTL equal to RebalanceInterval", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.LeaseTTL, c.Membership.RenewInterval, c.Membership.RebalanceInterval = 5*time.Second, time.Second, 5*time.Second
		}), want: invalid},
		{name: "LeaseTTL below RebalanceInterval", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.LeaseTTL, c.Membership.RenewInterval, c.Membership.RebalanceInterval = 5*time.Second, time.Second, 6*time.Second
		}), want: invalid},
		{name: "BlockTime as long as LeaseTTL - RenewInterval", input: cfg(func(c *streamq.SubscriberConfig) {
			c.Membership.LeaseTTL, c.Membership.RenewInterval, c.Read.BlockTime = 2*time.Second, time.Second, time.Second
		}), want: invalid},
		{name: "BlockTime beyond LeaseTTL", input: cfg(func(c *streamq.SubscriberConfig) { c.Read.BlockTime = time.Minute }), want: invalid},
		{name: "GroupStartID abc", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.GroupStartID = "abc" }), want: invalid},
		{name: "GroupStartID half an id", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.GroupStartID = "1-" }), want: invalid},
		{name: "GroupStartID negative", input: cfg(func(c *streamq.SubscriberConfig) { c.Membership.GroupStartID = "-1-0" }), want: invalid},
		{name: "stream prefix with brace", input: cfg(func(c *streamq.SubscriberConfig) { c.Keyspace.StreamPrefix = "stream:{x}" }), want: badName},
		{name: "control prefix with brace", input: cfg(func(c *streamq.SubscriberConfig) { c.Keyspace.ControlPrefix = "ctl{" }), want: badName},
		{name: "prefix with space", input: cfg(func(c *streamq.SubscriberConfig) { c.Keyspace.StreamPrefix = "my prefix" }), want: badName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { requireSubscriberRejected(t, tt.input, tt.want) })
	}
}

func TestSubscriberConfigAccepts(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	tests := []struct {
		name  string
		input streamq.SubscriberConfig
	}{
		{name: "client only", input: streamq.SubscriberConfig{Client: client}},
		{name: "start at new entries", input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{GroupStartID: "$"}}},
		{name: "start at 0", input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{GroupStartID: "0"}}},
		{name: "start at a stream id", input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{GroupStartID: "1700000000000-3"}}},
		{name: "filter", input: streamq.SubscriberConfig{Client: client, Read: streamq.ReadConfig{PartitionModulo: 3, PartitionRemainder: 2}}},
		{name: "modulo only", input: streamq.SubscriberConfig{Client: client, Read: streamq.ReadConfig{PartitionModulo: 2}}},
		{name: "unicode names", input: streamq.SubscriberConfig{Client: client, ConsumerGroup: "группа", Membership: streamq.MembershipConfig{ConsumerName: "消费者-1"}}},
		{name: "custom prefixes", input: streamq.SubscriberConfig{Client: client, Keyspace: streamq.Keyspace{StreamPrefix: "s:x", ControlPrefix: "c:x"}}},
		{name: "static member, grace LeaseTTL", input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{ConsumerName: "a", StaticMemberGrace: streamq.DefaultLeaseTTL}}},
		{name: "static member, long grace", input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{ConsumerName: "a", StaticMemberGrace: time.Hour}}},
		{name: "GroupExpiry off", input: streamq.SubscriberConfig{Client: client, Retention: streamq.RetentionConfig{GroupExpiry: -1}}},
		{name: "short GroupExpiry", input: streamq.SubscriberConfig{Client: client, Retention: streamq.RetentionConfig{GroupExpiry: 2 * time.Second, TrimInterval: time.Second}}},
		{name: "short intervals", input: streamq.SubscriberConfig{
			Client: client, Membership: streamq.MembershipConfig{LeaseTTL: 3 * time.Millisecond, RenewInterval: time.Millisecond, RebalanceInterval: 2 * time.Millisecond},
			Read: streamq.ReadConfig{BlockTime: time.Millisecond},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := streamq.NewSubscriber(tt.input, nil)
			require.NoError(t, err)
			require.NoError(t, sub.Close())
		})
	}
}

func TestSubscriberConfigDefaults(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	got := streamq.SubscriberConfigOf(sub)

	assert.Equal(t, streamq.DefaultMarshaler{}, got.Unmarshaler)
	assert.Zero(t, got.DefaultPartitionCount, "no count stated: the Subscriber never creates a topic")
	assert.Equal(t, streamq.TrimAcked, got.Retention.Policy)
	assert.Equal(t, streamq.DefaultMaxRetries, got.Retry.MaxRetries)
	assert.Equal(t, streamq.DefaultPartitionRefreshInterval, got.Membership.PartitionRefreshInterval)
	assert.Equal(t, streamq.DefaultConsumerGroup, got.ConsumerGroup)
	assert.Equal(t, streamq.DefaultConsumerNamePrefix, got.Membership.ConsumerNamePrefix)
	assert.True(t, strings.HasPrefix(got.Membership.ConsumerName, streamq.DefaultConsumerNamePrefix), "consumer name %q", got.Membership.ConsumerName)
	assert.Greater(t, len(got.Membership.ConsumerName), len(streamq.DefaultConsumerNamePrefix), "a random suffix follows the prefix")
	assert.Equal(t, streamq.DefaultGroupStartID, got.Membership.GroupStartID)
	assert.Equal(t, streamq.DefaultBatchCount, got.Read.BatchCount)
	assert.Equal(t, streamq.DefaultBlockTime, got.Read.BlockTime)
	assert.Equal(t, streamq.DefaultLeaseTTL, got.Membership.LeaseTTL)
	assert.Equal(t, streamq.DefaultRenewInterval, got.Membership.RenewInterval)
	assert.Equal(t, streamq.DefaultRebalanceInterval, got.Membership.RebalanceInterval)
	assert.Equal(t, streamq.DefaultScanInterval, got.Reclaim.ScanInterval)
	assert.Equal(t, streamq.DefaultClaimIdle, got.Reclaim.Idle)
	assert.Equal(t, streamq.DefaultClaimBatchSize, got.Reclaim.BatchSize)
	assert.Equal(t, 1, got.Delivery.MaxInFlightPerPartition)
	assert.Equal(t, streamq.DefaultAckBatchSize, got.Acks.BatchSize)
	assert.Equal(t, streamq.DefaultAckFlushInterval, got.Acks.FlushInterval)
	assert.Equal(t, streamq.DefaultCloseTimeout, got.Delivery.CloseTimeout)
	assert.Zero(t, got.Membership.MaxLeasedPartitions, "0 means no cap")
	assert.Zero(t, got.Delivery.MaxInFlight, "0 means no cap")
	assert.Zero(t, got.Read.PartitionModulo, "0 means every partition")
	assert.Equal(t, keys.Space{Stream: keys.DefaultStreamPrefix, Control: keys.DefaultControlPrefix}, streamq.SubscriberSpace(sub))

	// The documented relations between the defaults hold.
	assert.Greater(t, streamq.DefaultLeaseTTL, streamq.DefaultRenewInterval)
	assert.Greater(t, streamq.DefaultLeaseTTL, streamq.DefaultRebalanceInterval)

	other, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	assert.NotEqual(t, got.Membership.ConsumerName, streamq.SubscriberConfigOf(other).Membership.ConsumerName, "generated names are unique")
}

func TestSubscriberConfigKeepsSetValues(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	tests := []struct {
		name  string
		input streamq.SubscriberConfig
		want  func(t *testing.T, got streamq.SubscriberConfig)
	}{
		{
			name:  "consumer name prefix",
			input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{ConsumerNamePrefix: "svc-"}},
			want: func(t *testing.T, got streamq.SubscriberConfig) {
				assert.True(t, strings.HasPrefix(got.Membership.ConsumerName, "svc-"), got.Membership.ConsumerName)
			},
		},
		{
			name:  "explicit consumer name wins over the prefix",
			input: streamq.SubscriberConfig{Client: client, Membership: streamq.MembershipConfig{ConsumerName: "worker-1", ConsumerNamePrefix: "svc-"}},
			want: func(t *testing.T, got streamq.SubscriberConfig) {
				assert.Equal(t, "worker-1", got.Membership.ConsumerName)
			},
		},
		{
			name:  "counts and durations",
			input: streamq.SubscriberConfig{Client: client, Read: streamq.ReadConfig{BatchCount: 7, BlockTime: time.Second}, Delivery: streamq.DeliveryConfig{MaxInFlightPerPartition: 4}, Membership: streamq.MembershipConfig{GroupStartID: "$"}},
			want: func(t *testing.T, got streamq.SubscriberConfig) {
				assert.Equal(t, 7, got.Read.BatchCount)
				assert.Equal(t, time.Second, got.Read.BlockTime)
				assert.Equal(t, 4, got.Delivery.MaxInFlightPerPartition)
				assert.Equal(t, "$", got.Membership.GroupStartID)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := streamq.NewSubscriber(tt.input, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			tt.want(t, streamq.SubscriberConfigOf(sub))
		})
	}
}

func TestPublisherConfigRejects(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	invalid := []error{streamq.ErrInvalidConfig}
	badName := []error{streamq.ErrInvalidConfig, streamq.ErrInvalidName}
	tests := []struct {
		name  string
		input streamq.PublisherConfig
		want  []error
	}{
		{name: "nil client", input: streamq.PublisherConfig{}, want: invalid},
		{name: "negative DefaultPartitionCount", input: streamq.PublisherConfig{Client: client, DefaultPartitionCount: -1}, want: invalid},
		{name: "unknown TrimPolicy", input: streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{Policy: "sometimes"}}, want: invalid},
		{name: "MaxLen -2", input: streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: -2}}, want: invalid},
		{name: "Idempotency.Window -2ns", input: streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: -2}}, want: invalid},
		{name: "Idempotency.Window under 1ms", input: streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: time.Microsecond}}, want: invalid},
		{name: "Idempotency.ByUUID with the window off", input: streamq.PublisherConfig{Client: client, Idempotency: streamq.IdempotencyConfig{Window: -1, ByUUID: true}}, want: invalid},
		{name: "GroupExpiry -2ns", input: streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{GroupExpiry: -2}}, want: invalid},
		{name: "GroupExpiry under 1s", input: streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{GroupExpiry: time.Millisecond}}, want: invalid},
		{name: "Payloads.Threshold -2", input: streamq.PublisherConfig{Client: client, Payloads: streamq.PayloadConfig{Threshold: -2}}, want: invalid},
		{name: "negative PartitionRefreshInterval", input: streamq.PublisherConfig{Client: client, Partitioning: streamq.PartitioningConfig{RefreshInterval: -time.Second}}, want: invalid},
		{name: "stream prefix with brace", input: streamq.PublisherConfig{Client: client, Keyspace: streamq.Keyspace{StreamPrefix: "{s"}}, want: badName},
		{name: "control prefix with brace", input: streamq.PublisherConfig{Client: client, Keyspace: streamq.Keyspace{ControlPrefix: "c}"}}, want: badName},
		{name: "prefix with control char", input: streamq.PublisherConfig{Client: client, Keyspace: streamq.Keyspace{StreamPrefix: "s\x00"}}, want: badName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, err := streamq.NewPublisher(tt.input, nil)
			require.Error(t, err)
			assert.Nil(t, pub)
			for _, want := range tt.want {
				assert.ErrorIs(t, err, want)
			}
		})
	}
}

func TestPublisherConfigDefaults(t *testing.T) {
	t.Parallel()
	client := unusedClient(t)
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	got := streamq.PublisherConfigOf(pub)

	assert.Equal(t, streamq.DefaultMarshaler{}, got.Marshaler)
	assert.Zero(t, got.DefaultPartitionCount, "no count stated: a new topic gets DefaultPartitionCount")
	assert.Equal(t, streamq.TrimAcked, got.Trim.Policy)
	assert.Equal(t, streamq.HashPartitioner{}, got.Partitioning.Partitioner)
	assert.NotNil(t, got.Partitioning.PartitionKey)
	assert.Equal(t, streamq.DefaultMaxLen, got.Trim.MaxLen)
	assert.False(t, got.Trim.Exact)
	assert.Equal(t, streamq.DefaultPartitionRefreshInterval, got.Partitioning.RefreshInterval)
	assert.Equal(t, streamq.DefaultIdempotencyWindow, got.Idempotency.Window, "idempotent appends by default")
	assert.Equal(t, streamq.DefaultGroupExpiry, got.Trim.GroupExpiry)
	assert.Equal(t, keys.Space{Stream: keys.DefaultStreamPrefix, Control: keys.DefaultControlPrefix},
		streamq.PublishConfig(got, watermill.NopLogger{}).Space, "the engine's keys")

	uncapped, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, Trim: streamq.TrimConfig{MaxLen: -1}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = uncapped.Close() })
	assert.Equal(t, int64(-1), streamq.PublisherConfigOf(uncapped).Trim.MaxLen, "-1 disables the cap")
	assert.Equal(t, int64(-1), streamq.PublishConfig(streamq.PublisherConfigOf(uncapped), watermill.NopLogger{}).Trim.MaxLen, "and the engine's length retention")
}
