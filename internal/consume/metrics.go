package consume

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/health"
	"github.com/streamq-dev/streamq/internal/retry"
)

// Labels say where counts come from: a subscription (Partition -1) or one of its partitions.
type Labels struct {
	Topic     string
	Partition int
	Group     string
	Consumer  string
}

// Metrics binds Counters to the labels of a subscription or a partition, once.
type Metrics interface {
	Bind(l Labels) Counters
}

// Counters are what a subscription and its partitions count and report, bound to their
// labels. They are called on the hot path, from many goroutines.
type Counters interface {
	Consumed()
	Acked()
	Retried()
	DeadLettered()
	PayloadMissing()
	HandleLatency(d time.Duration)
	BackpressureWait(d time.Duration)
	InFlight(n int)
	DLQReplay(d time.Duration)
	DLQDeleted(n int)
	// Trimmed and GroupExpired count what a retention trim of the partition did.
	Trimmed(kind string, n int64)
	GroupExpired(group string)
	// EligiblePartitions, LeasedPartitions and MaxLeasedPartitions are a subscription's
	// partition gauges.
	EligiblePartitions(n int)
	LeasedPartitions(n int)
	MaxLeasedPartitions(n int)
	// Outage reports a partition's downstream outage (zero Since: it ended); Paused a
	// subscription's pause (zero since: resumed); Forget a subscription that closed.
	Outage(o Outage)
	Paused(since time.Time)
	Forget()
}

// Hooks are the tracing hooks of deliveries and settling steps. The function each returns is
// called once.
type Hooks interface {
	// StartDelivery starts the span of one delivery; the context it returns is the parent of
	// the message's context. end gets the handler's answer (deferred: a DeferAck).
	StartDelivery(ctx context.Context, msg *message.Message, d *Delivery) (context.Context, func(Outcome))
	// StartSettle starts the span of a step that writes (retry, dead letter, replay, drop);
	// end gets whether it took effect.
	StartSettle(msg *message.Message, s Settlement) func(ok bool)
}

// Outcome is how a delivery ended.
type Outcome int

// The outcomes of a delivery.
const (
	OutcomeAcked    Outcome = iota
	OutcomeNacked           // a retry, a dead letter or a redelivery follows
	OutcomeDeferred         // acked after Defer: the entry is settled later
	OutcomeStopped          // the partition stopped first; the entry is delivered again
)

// Step is the kind of a settling step that writes.
type Step int

// The steps that write.
const (
	StepRetry Step = iota
	StepDeadLetter
	StepReplay
	StepDrop
)

// stepOf is the step a verdict that writes takes.
func stepOf(v retry.Verdict) Step {
	switch v {
	case retry.RetryNow, retry.RetryLater:
		return StepRetry
	case retry.DeadLetter:
		return StepDeadLetter
	case retry.ReplayIt:
		return StepReplay
	default:
		return StepDrop
	}
}

// Outage is one partition waiting out a downstream outage; zero Since when it ended.
type Outage struct {
	Topic     string
	Partition int
	Since     time.Time
	NextProbe time.Time
	Probes    int
	Reason    string
}

func outageOf(s retry.State) Outage {
	return Outage{Topic: s.Topic, Partition: s.Partition, Since: s.Since, NextProbe: s.NextProbe, Probes: s.Probes, Reason: s.Reason}
}

// Settlement is one settling step that writes, as the hooks see it.
type Settlement struct {
	Step      Step
	Topic     string // as subscribed
	Partition int
	Group     string
	StreamID  string
	Reason    string
	Retry     int       // the number of the retry written, or the retries before the dead letter
	Due       time.Time // a parked retry's due time
}

// Stats are a Consumer's counters since it was created.
type Stats struct {
	Delivered, Acked, Nacked, Malformed, DeadLettered, PayloadMissing, LeasesLost, TrimmedUnacked int64
	Outages                                                                                       []Outage
	Memory                                                                                        []health.Reading
}

// counts are the Consumer's Stats counters, shared by its partitions.
type counts struct {
	delivered, acked, nacked, malformed, deadLettered, payloadMissing, leasesLost, trimmedUnacked atomic.Int64
}
