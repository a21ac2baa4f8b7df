package streamq

import (
	"errors"
	"time"
)

const (
	defaultScanInterval   = 30 * time.Second
	defaultClaimIdle      = time.Minute
	defaultClaimBatchSize = 100
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
