package streamq

import (
	"errors"
	"fmt"
	"time"
)

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
