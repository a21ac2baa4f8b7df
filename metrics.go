package streamq

import "time"

// Labels identify where a metric comes from.
type Labels struct {
	Topic     string
	Partition int
	Group     string
	Consumer  string
}

// MetricsCollector receives streamq's metrics. Calls happen on
// the hot path, from many goroutines: implementations must be safe for concurrent use and
// cheap. The default is NoopMetrics; package metrics/prometheus implements it with
// client_golang.
type MetricsCollector interface {
	// Produced counts messages appended (or parked with a delay) by a Publisher.
	Produced(topic string, partition int)
	// Consumed counts messages handed to a handler (every delivery).
	Consumed(l Labels)
	// Acked counts messages acked by a handler.
	Acked(l Labels)
	// Retried counts nacked messages scheduled for a retry.
	Retried(l Labels)
	// DeadLettered counts messages written to the DLQ (exhausted, asked for, poison).
	DeadLettered(l Labels)
	// PayloadMissing counts entries whose offloaded payload was gone.
	PayloadMissing(l Labels)
	// DLQDeleted counts dead letters deleted one at a time: by admin, or dropped by a DLQ
	// handler (Drop). DLQCleared counts those admin removed clearing a topic's DLQ.
	DLQDeleted(topic string, n int)
	DLQCleared(topic string, n int)

	// InFlight is the number of unacked messages of a subscription.
	InFlight(l Labels, n int)
	// EligiblePartitions is how many partitions this member may lease (after its filter);
	// LeasedPartitions how many it holds; MaxLeasedPartitions its cap (0: none).
	EligiblePartitions(l Labels, n int)
	LeasedPartitions(l Labels, n int)
	MaxLeasedPartitions(l Labels, n int)

	// HandleLatency is the time from handing a message over to its Ack or Nack.
	HandleLatency(l Labels, d time.Duration)
	// BackpressureWait is the time a fetched message waited for its in-flight slots (its
	// partition's MaxInFlightPerPartition and the Subscriber's MaxInFlight), as one wait.
	BackpressureWait(l Labels, d time.Duration)
	// DLQReplay is the time of one replay of a dead letter.
	DLQReplay(topic string, d time.Duration)
	// Trimmed counts entries removed by retention; kind is "length" or "age" (every entry a
	// trim removed), "pressure" (entries every group acked, removed below MaxLen because Redis
	// memory was at the high-water mark), "length-unacked" or "age-unacked" (of those, entries
	// some group had not acked: TrimHard, or a GroupExpiry that left a group out), "unacked"
	// (entries of the labels' group that a hard cap or its expiry removed before the group
	// acked them, reported by its lease holder), "dlq-age",
	// "dlq-length" or "orphaned-payloads".
	Trimmed(l Labels, kind string, n int64)
}

// MetricsForgetter is implemented by a MetricsCollector that can drop the series of a member
// that left. A subscription calls Forget with its labels (Partition -1) once it has closed,
// so members restarted with generated names leave no series behind. Optional: a collector
// without it keeps its series.
type MetricsForgetter interface {
	Forget(l Labels)
}

// PauseReporter is implemented by a MetricsCollector that shows paused subscriptions
// (package metrics/prometheus does). A subscription calls Paused with its labels
// (Partition -1) when its delivery pauses, by Subscriber.Pause or by an operator's
// admin.PauseGroup, with when the pause started, and with the zero time when it resumes.
// Optional: a collector without it shows no pause.
type PauseReporter interface {
	Paused(l Labels, since time.Time)
}

// DuplicateReporter is implemented by a MetricsCollector that counts the messages a
// Publisher's idempotent append dropped (PublisherConfig.Idempotency): a message appended to that
// partition within the window already, sent again by go-redis after a lost reply, by
// streamq, or by the caller. Optional: a collector without it counts nothing.
type DuplicateReporter interface {
	DuplicateDropped(topic string, partition int)
}

// MemoryReporter is implemented by a MetricsCollector that shows the memory of the Redis
// servers (package metrics/prometheus does). A Publisher's or Subscriber's memory watch
// (MemoryWatch) calls RedisMemory after each reading of a server, every MemoryWatch.Interval:
// its used and max memory, whether it is at the high-water mark, and since when it is full.
// Several Publishers and Subscribers of one server report the same figures. Optional: a
// collector without it shows no memory.
type MemoryReporter interface {
	RedisMemory(m ServerMemory)
}

// NoopMetrics discards every metric.
type NoopMetrics struct{}

var _ MetricsCollector = NoopMetrics{}

// Produced does nothing.
func (NoopMetrics) Produced(string, int) {}

// Consumed does nothing.
func (NoopMetrics) Consumed(Labels) {}

// Acked does nothing.
func (NoopMetrics) Acked(Labels) {}

// Retried does nothing.
func (NoopMetrics) Retried(Labels) {}

// DeadLettered does nothing.
func (NoopMetrics) DeadLettered(Labels) {}

// PayloadMissing does nothing.
func (NoopMetrics) PayloadMissing(Labels) {}

// DLQDeleted does nothing.
func (NoopMetrics) DLQDeleted(string, int) {}

// DLQCleared does nothing.
func (NoopMetrics) DLQCleared(string, int) {}

// InFlight does nothing.
func (NoopMetrics) InFlight(Labels, int) {}

// EligiblePartitions does nothing.
func (NoopMetrics) EligiblePartitions(Labels, int) {}

// LeasedPartitions does nothing.
func (NoopMetrics) LeasedPartitions(Labels, int) {}

// MaxLeasedPartitions does nothing.
func (NoopMetrics) MaxLeasedPartitions(Labels, int) {}

// HandleLatency does nothing.
func (NoopMetrics) HandleLatency(Labels, time.Duration) {}

// BackpressureWait does nothing.
func (NoopMetrics) BackpressureWait(Labels, time.Duration) {}

// DLQReplay does nothing.
func (NoopMetrics) DLQReplay(string, time.Duration) {}

// Trimmed does nothing.
func (NoopMetrics) Trimmed(Labels, string, int64) {}

// OutageReporter is implemented by a MetricsCollector that shows partitions waiting out a
// downstream outage (package metrics/prometheus does). A partition's lease holder calls
// Outage with the partition's labels when an outage starts and after each failed probe, and
// with a zero PartitionOutage (zero Since) when the partition resumes. Optional.
type OutageReporter interface {
	Outage(l Labels, o PartitionOutage)
}

// GroupExpiryReporter is implemented by a MetricsCollector that counts group expiries
// (package metrics/prometheus does): a retention trim of a Publisher or of a lease holder
// left group l.Group out on partition l.Partition of l.Topic, because no member of the group
// was live there for the GroupExpiry (l.Consumer is empty). Each expiry is reported once, by the trim that found
// it. Optional: a collector without it counts nothing (the entries the expired group loses
// are counted by Trimmed all the same).
type GroupExpiryReporter interface {
	GroupExpired(l Labels)
}
