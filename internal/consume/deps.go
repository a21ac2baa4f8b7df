package consume

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/store"
	"github.com/streamq-dev/streamq/internal/stream"
)

// partDeps is what the components of one owned partition are built from: its store (every
// storage step, with the partition's keys and fence), this member's name, the rules of what
// it reads, its lease term, the clock, a logger with the partition's fields, its counters
// and the Consumer's, the context of its Redis calls, and the two reports a component makes
// upward. Components keep what they need of it; none holds the worker or the subscription.
type partDeps struct {
	topic  string // as subscribed (a DLQ's name on a DLQ view)
	store  Store
	keys   keys.Partition
	member string
	rules  topicRules
	term   *lease.Term
	clock  clock.Clock
	log    watermill.LoggerAdapter
	count  Counters        // the partition's
	stats  *counts         // the Consumer's
	ctx    context.Context // Redis calls of the partition's loops; cancelled when it stops
	stop   <-chan struct{} // closed when the partition stops delivering
	lost   func(error)     // the lease is lost: stop the partition at once
	heal   func()          // a group or stream is missing: ask the rebalancer to heal
	hint   *nackHint       // the Consumer's hint about nacks without a reason; nil on a DLQ view
}

func (d partDeps) group() string { return d.keys.Group }

func (d partDeps) stopping() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// Store is the storage steps of one owned partition (store.Partition). Each component names
// the part it uses, so it can be tested with a fake.
type Store interface {
	ackStore
	claimStore
	settleStore
	moveStore
	keepStore
	outageStore
}

var _ Store = (*store.Partition)(nil)

type ackStore interface {
	Ack(ctx context.Context, a store.Ack) error
}

type claimStore interface {
	Claim(ctx context.Context, minIdle time.Duration, start string, count int64) ([]stream.Entry, string, error)
	ClaimOthers(ctx context.Context, count int64) ([]stream.Entry, error)
	DeliveryCounts(ctx context.Context, first, last string, count int64) (map[string]int64, error)
}

type settleStore interface {
	Requeue(ctx context.Context, id string, fields []string) (bool, error)
	Schedule(ctx context.Context, id string, due time.Time, item retry.Item) (bool, error)
	DeadLetter(ctx context.Context, id string, rec dlq.Record) (bool, error)
	Replay(ctx context.Context, id string, entry dlq.Replayed, drop bool) error
	Drop(ctx context.Context, id string) (bool, error)
	LoadPayload(ctx context.Context, ref string) (string, error)
}

type moveStore interface {
	RetrySet() retry.Set
	DelaySet() retry.Set
	Move(ctx context.Context, set retry.Set, limit int) (retry.Moved, error)
	HandBack(ctx context.Context, set retry.Set, p int, h retry.Handed) error
}

type keepStore interface {
	MarkSeen(ctx context.Context, now time.Time) (time.Time, error)
	Trim(ctx context.Context, rule retention.Rule) (retention.Trimmed, error)
	TakeLosses(ctx context.Context) (int64, error)
	PruneConsumers(ctx context.Context, minIdle time.Duration, live []string) ([]string, error)
	TrimDLQBefore(ctx context.Context, cutoff time.Time) (int64, error)
	TrimDLQLen(ctx context.Context, maxLen int64) (int64, error)
	SweepOrphans(ctx context.Context, olderThan time.Time, cursor, limit int64) (int, int64, error)
}

type outageStore interface {
	WriteOutage(ctx context.Context, rec outage.Record, ttl time.Duration) error
	ReadOutage(ctx context.Context) (*outage.Record, error)
	ClearOutage(ctx context.Context) error
}
