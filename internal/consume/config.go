package consume

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/retry"
)

// Config is what a Consumer is built from: every value already defaulted and validated (the
// API's config groups are mapped onto it in one place).
type Config struct {
	Client            redis.UniversalClient
	Space             keys.Space
	Group             string
	Member            string // ConsumerName
	DefaultPartitions int    // the partition count a missing topic is created with; 0: none
	// Unmarshal decodes a delivered entry; nil: DefaultMarshaler's format, decoded without
	// copying the payload out of the reply. Marshal encodes a retry; nil: the same format.
	Unmarshal func(values map[string]any) (*message.Message, error)
	Marshal   func(topic string, msg *message.Message) (map[string]any, error)

	Membership Membership
	Read       func(topic string) Read // how a subscription to topic reads
	Reclaim    Reclaim
	Dispatch   Dispatch
	Acks       Acks
	Retry      Retry
	Retention  Retention
	Payloads   Payloads

	Errors Errors // the API's sentinels the engine wraps

	Metrics Metrics // binds counters to labels; required
	Hooks   Hooks   // tracing; nil: off
	Memory  *health.Watch
	Check   *health.Check
	Clock   clock.Clock
	Log     watermill.LoggerAdapter
}

// Membership is how a member holds its partitions: the lease and heartbeat TTL, the renewal
// and rebalance intervals, how often the topic's metadata is re-read, where a new group
// starts, a static member's grace (0: not static) and the cap on leased partitions over
// every subscription (0: none).
type Membership struct {
	LeaseTTL                 time.Duration
	RenewInterval            time.Duration
	RebalanceInterval        time.Duration
	PartitionRefreshInterval time.Duration
	GroupStartID             string
	StaticMemberGrace        time.Duration
	MaxLeased                int
}

// lease is the membership as package lease takes it.
func (m Membership) lease() lease.Config {
	return lease.Config{LeaseTTL: m.LeaseTTL, RenewInterval: m.RenewInterval, RebalanceInterval: m.RebalanceInterval,
		PartitionRefreshInterval: m.PartitionRefreshInterval, GroupStartID: m.GroupStartID, StaticMemberGrace: m.StaticMemberGrace}
}

// Read is how one subscription reads its partitions: the COUNT and BLOCK of a read round,
// and the partition filter (i % Modulo == Remainder; Modulo 0: every partition).
type Read struct {
	BatchCount        int
	BlockTime         time.Duration
	Modulo, Remainder int
}

// Reclaim is the pending scan: every ScanInterval, entries idle for Idle, BatchSize a claim.
type Reclaim struct {
	ScanInterval, Idle time.Duration
	BatchSize          int
}

// Dispatch is how many messages are handed out at once, in what order, and how long a
// stopping partition waits for them.
type Dispatch struct {
	MaxInFlightPerPartition int
	OrderByKey              bool
	PartitionKey            func(topic string, msg *message.Message) string
	MaxInFlight             int // over every subscription; 0: no cap
	CloseTimeout            time.Duration
}

// Acks is how acks are batched and what they delete ("none", "immediate", "all-groups-ack").
type Acks struct {
	BatchSize     int
	FlushInterval time.Duration
	DeletePolicy  string
	SetTTL        time.Duration
}

// Retry is how nacks are decided: the backoff before each retry, the retry cap (a count,
// -1 for ever, -2 none), how many snoozes a message gets (-2: none), how a partition waits out
// an outage (after OutageAfter failures in a row, 0: only marked ones; probes after
// OutageBackoff, doubling up to OutageMaxBackoff); and how the mover appends due retries and
// delays (every MoverInterval at most, MoverBatch a step).
type Retry struct {
	Backoff                         Backoff
	MaxRetries, MaxSnoozes          int
	OutageAfter                     int
	OutageBackoff, OutageMaxBackoff time.Duration
	MoverInterval                   time.Duration
	MoverBatch                      int
}

// Backoff is the wait before retry number attempt (1 for the first retry).
type Backoff interface {
	NextBackoff(attempt int) time.Duration
}

// decisions is the retry config as retry.Decide takes it.
func (r Retry) decisions() retry.Config {
	return retry.Config{Backoff: r.Backoff, MaxRetries: r.MaxRetries, MaxSnoozes: r.MaxSnoozes,
		Outage: retry.OutageConfig{After: r.OutageAfter, Backoff: r.OutageBackoff, MaxBackoff: r.OutageMaxBackoff}}
}

// Retention is what the lease holders trim every TrimInterval besides the length retention
// the topic's publishers recorded: entries older than MaxAge (0: off; Hard: even unacked),
// dead letters older than DLQMaxAge or beyond DLQMaxLen (0: off); GroupExpiry (0: off) leaves
// a group with no live member out of what retention waits for.
type Retention struct {
	MaxAge       time.Duration
	Hard         bool
	GroupExpiry  time.Duration
	TrimInterval time.Duration
	DLQMaxAge    time.Duration
	DLQMaxLen    int64
}

// Payloads is how a replayed dead letter's large payload is stored: above Threshold bytes
// (-1: never) in a key of its own, for TTL (0: until every group acked it).
type Payloads struct {
	Threshold int
	TTL       time.Duration
}

// Errors are the API's sentinel errors the engine wraps, so that errors.Is holds on what
// Subscribe returns: a closed Consumer, a static member's name held by a live process.
type Errors struct {
	Closed, NameInUse error
}
