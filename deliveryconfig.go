package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

const (
	defaultScanInterval   = 30 * time.Second
	defaultClaimIdle      = time.Minute
	defaultClaimBatchSize = 100
	defaultCloseTimeout   = 5 * time.Second
)

// ReclaimConfig is the safety net for entries left pending by a member that went away (a new
// owner claims a partition's pending entries at once; the scan finds the rest).
type ReclaimConfig struct {
	// ScanInterval is how often owned partitions are scanned for pending entries idle longer
	// than Idle. Default 30s.
	ScanInterval time.Duration
	// Idle is how long a pending entry must be idle before the scan claims it. Default 1m.
	Idle time.Duration
	// BatchSize is the COUNT of one XAUTOCLAIM. Default 100.
	BatchSize int
}

func (r *ReclaimConfig) setDefaults() {
	setDefault(&r.ScanInterval, defaultScanInterval)
	setDefault(&r.Idle, defaultClaimIdle)
	setDefault(&r.BatchSize, defaultClaimBatchSize)
}

func (r ReclaimConfig) validate() error {
	return errors.Join(durationPositive("Reclaim.ScanInterval", r.ScanInterval),
		durationPositive("Reclaim.Idle", r.Idle), positive("Reclaim.BatchSize", r.BatchSize))
}

// DeliveryConfig is how many messages are handed out at once, in what order, and how long
// Close waits for them.
type DeliveryConfig struct {
	// MaxInFlightPerPartition is how many messages of one partition may be unacked at once.
	// Default 1: ordered. Above 1, order within a partition is not kept, unless OrderByKey.
	MaxInFlightPerPartition int
	// OrderByKey keeps order per partition key instead of per partition: up to
	// MaxInFlightPerPartition handlers of a partition run at once, and the messages of one
	// key are handled one after another, in stream order; a retry holds back the later
	// messages of its key. It needs MaxInFlightPerPartition above 1. Default false.
	OrderByKey bool
	// PartitionKey is the key OrderByKey orders by. Default MetadataPartitionKey (the
	// Publisher's default). Set only with OrderByKey.
	PartitionKey func(topic string, msg *message.Message) string
	// MaxInFlight caps unacked messages across every subscription of this Subscriber: a
	// partition with a message ready waits for a slot (MetricsCollector.BackpressureWait).
	// Default 0: no cap beyond MaxInFlightPerPartition.
	MaxInFlight int
	// CloseTimeout bounds how long Close and a partition handover wait for in-flight
	// messages to be acked or nacked. Default 5s.
	CloseTimeout time.Duration
}

func (d *DeliveryConfig) setDefaults() {
	setDefault(&d.MaxInFlightPerPartition, 1)
	if d.PartitionKey == nil {
		d.PartitionKey = MetadataPartitionKey
	}
	setDefault(&d.CloseTimeout, defaultCloseTimeout)
}

func (d DeliveryConfig) validate() error {
	errs := []error{positive("Delivery.MaxInFlightPerPartition", d.MaxInFlightPerPartition),
		notNegative("Delivery.MaxInFlight", d.MaxInFlight), durationPositive("Delivery.CloseTimeout", d.CloseTimeout)}
	if d.OrderByKey && d.MaxInFlightPerPartition == 1 {
		errs = append(errs, errors.New("Delivery.OrderByKey needs Delivery.MaxInFlightPerPartition above 1 (with one message in flight a partition is ordered anyway)"))
	}
	return errors.Join(errs...)
}

const (
	defaultAckBatchSize     = 100
	defaultAckFlushInterval = 20 * time.Millisecond
	defaultAckSetTTL        = 24 * time.Hour
)

// AckDeletePolicy says what happens to a stream entry once it is acked.
type AckDeletePolicy string

// Ack-delete policies: what an ack does to the entry besides XACK.
const (
	// AckDeleteNone only acks (XACK): entries stay until retention trims them.
	AckDeleteNone AckDeletePolicy = "none"
	// AckDeleteImmediate deletes the entry once this group acks it (XACK then XDEL): for
	// topics read by a single group.
	AckDeleteImmediate AckDeletePolicy = "immediate"
	// AckDeleteAllGroups deletes the entry once every group registered on the stream, live or
	// not, has acked it.
	AckDeleteAllGroups AckDeletePolicy = "all-groups-ack"
)

// AckConfig is how acks are flushed to Redis and what they delete.
type AckConfig struct {
	// BatchSize flushes a partition's acks when this many wait. Default 100.
	BatchSize int
	// FlushInterval flushes waiting acks at least this often. Default 20ms.
	FlushInterval time.Duration
	// DeletePolicy is what an ack does to the entry. Default AckDeleteNone.
	DeletePolicy AckDeletePolicy
	// SetTTL bounds how long the set of groups that acked an entry is kept (used by
	// AckDeleteAllGroups and offloaded payloads). Default 24h.
	SetTTL time.Duration
}

func (a *AckConfig) setDefaults() {
	setDefault(&a.BatchSize, defaultAckBatchSize)
	setDefault(&a.FlushInterval, defaultAckFlushInterval)
	setDefault(&a.DeletePolicy, AckDeleteNone)
	setDefault(&a.SetTTL, defaultAckSetTTL)
}

func (a AckConfig) validate() error {
	errs := []error{positive("Acks.BatchSize", a.BatchSize), durationPositive("Acks.FlushInterval", a.FlushInterval),
		durationPositive("Acks.SetTTL", a.SetTTL)}
	switch a.DeletePolicy {
	case AckDeleteNone, AckDeleteImmediate, AckDeleteAllGroups:
	default:
		errs = append(errs, fmt.Errorf("Acks.DeletePolicy must be %q, %q or %q, got %q", AckDeleteNone, AckDeleteImmediate, AckDeleteAllGroups, a.DeletePolicy))
	}
	return errors.Join(errs...)
}
