package streamq

import (
	"context"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/lease"
)

// partDeps is what the components of one owned partition are built from: the client, the
// partition's keys and fence, the rules of what it reads, its lease term, the clock, a
// logger with the partition's fields, its counters, the context of its Redis calls, and the
// two reports a component makes upward. Components keep what they need of it; none holds
// the worker or the subscription.
type partDeps struct {
	rdb    redis.UniversalClient
	keys   keys.Partition
	fence  fence.Fence
	member string
	rules  topicRules
	term   *lease.Term
	clock  clock.Clock
	log    watermill.LoggerAdapter
	count  partCounters
	ctx    context.Context // Redis calls of the partition's loops; cancelled when it stops
	stop   <-chan struct{} // closed when the partition stops delivering
	lost   func(error)     // the lease is lost: stop the partition at once
	heal   func()          // a group or stream is missing: ask the rebalancer to heal
	hint   *nackHint       // the Subscriber's hint about nacks without a reason; nil on a DLQ view
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

// partCounters are one partition's share of the Subscriber's Stats and of the metrics, and
// the Subscriber's Tracer (nil: tracing off).
type partCounters struct {
	stats   *counters
	metrics MetricsCollector
	tracer  Tracer
	labels  Labels // the partition's labels
}
