package streamq

import (
	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/publish"
)

// What the tests of package streamq_test may read of the package's insides, compiled into its
// tests only: the unexported defaults of the config groups, a Publisher's and a Subscriber's
// config once defaulted, the engine config wire.go builds, the copy-free decoder, and a
// Subscriber's crash (how a test kills a member without a process of its own).

// The defaults of the config groups (config_*.go), unexported in the API.
const (
	DefaultAckBatchSize             = defaultAckBatchSize
	DefaultAckFlushInterval         = defaultAckFlushInterval
	DefaultBatchCount               = defaultBatchCount
	DefaultBlockTime                = defaultBlockTime
	DefaultClaimBatchSize           = defaultClaimBatchSize
	DefaultClaimIdle                = defaultClaimIdle
	DefaultCloseTimeout             = defaultCloseTimeout
	DefaultConsumerGroup            = defaultConsumerGroup
	DefaultConsumerNamePrefix       = defaultConsumerNamePrefix
	DefaultGroupExpiry              = defaultGroupExpiry
	DefaultGroupStartID             = defaultGroupStartID
	DefaultIdempotencyWindow        = defaultIdempotencyWindow
	DefaultLeaseTTL                 = defaultLeaseTTL
	DefaultMaxLen                   = defaultMaxLen
	DefaultMaxRetries               = defaultMaxRetries
	DefaultPartitionRefreshInterval = defaultPartitionRefreshInterval
	DefaultPayloadThreshold         = defaultPayloadThreshold
	DefaultRebalanceInterval        = defaultRebalanceInterval
	DefaultRenewInterval            = defaultRenewInterval
	DefaultReplicaTimeout           = defaultReplicaTimeout
	DefaultScanInterval             = defaultScanInterval
)

// DefaultRetryPolicy is the Retry.Policy a SubscriberConfig gets when it states none.
func DefaultRetryPolicy() ExponentialBackoff { return defaultRetryPolicy() }

// SetDefaults fills the zero fields of c as NewPublisher does.
func SetDefaults(c *PublisherConfig) { c.setDefaults() }

// PublisherConfigOf is the config p runs with: the one given to NewPublisher, defaulted.
func PublisherConfigOf(p *Publisher) PublisherConfig { return p.config }

// SubscriberConfigOf is the config s runs with: the one given to NewSubscriber, defaulted.
func SubscriberConfigOf(s *Subscriber) SubscriberConfig { return s.config }

// SubscriberSpace is the key space of s's Keyspace.
func SubscriberSpace(s *Subscriber) keys.Space { return s.space }

// ReadFor is the ReadConfig c reads topic with: its Topics entry over Read.
func ReadFor(c SubscriberConfig, topic string) ReadConfig { return c.readFor(topic) }

// PublishConfig is the engine config wire.go builds from c.
func PublishConfig(c PublisherConfig, logger watermill.LoggerAdapter) publish.Config {
	return publishConfig(c, logger)
}

// UnmarshalReply is the worker's copy-free variant of DefaultMarshaler.Unmarshal.
func UnmarshalReply(values map[string]any) (*message.Message, error) { return unmarshalReply(values) }

// Crash stops every subscription of s the way a killed process would: no ack flush, no lease
// release, no leave.
func Crash(s *Subscriber) { s.crash() }
