package streamq

import (
	"errors"
	"fmt"
	"time"
)

// Retry caps that are not a count, for RetryConfig.MaxRetries.
const (
	// RetryForever retries a nacked message until it succeeds: it is never dead-lettered by
	// the cap (DeadLetter still sends it).
	RetryForever = -1
	// NoRetries dead-letters a message at its first failure: the handler is called once.
	NoRetries = -2
)

const (
	defaultMaxRetries    = 3
	defaultMoverInterval = time.Second
	defaultMoverBatch    = 100
	defaultMaxSnoozes    = 100
)

// RetryConfig is what happens to a nacked message: it is handled again after a backoff, at
// most MaxRetries times, then it goes to its partition's dead-letter queue. A message is
// handled at most 1 + N times, N being its MaxRetriesMetadata when it has one, else
// MaxRetries (or the Policy's MaxAttempts, when only the Policy states a cap), else 3.
// docs/retries-and-dlq.md says more.
type RetryConfig struct {
	// MaxRetries is how many times a nacked message is retried before it is dead-lettered:
	// the handler is called at most 1 + MaxRetries times. A message's MaxRetriesMetadata
	// takes precedence. Default 3 (4 handler calls), or the Policy's MaxAttempts when it
	// states one; RetryForever (-1) or NoRetries (-2) otherwise. A Policy stating another
	// cap is rejected.
	MaxRetries int
	// Policy is the backoff before each retry. Default ExponentialBackoff{Base: time.Second,
	// Max: time.Minute}: 1 s, 2 s, 4 s ...
	Policy RetryPolicy
	// MoverInterval is the longest an owned partition's mover waits before appending due
	// retries and delayed messages (it wakes sooner for retries it scheduled). Default 1s.
	MoverInterval time.Duration
	// MoverBatch is the most due items one mover step appends. Default 100.
	MoverBatch int
	// MaxSnoozes is how many times one message may be snoozed (Snooze): a snooze beyond it
	// is a failure, retried or dead-lettered as any other. Default 100; NoRetries (-2):
	// every snooze is a failure.
	MaxSnoozes int
	// Outage is how a partition waits out a downstream outage (Outage, ErrOutage) instead
	// of retrying and dead-lettering its backlog.
	Outage OutageConfig
}

func (r *RetryConfig) setDefaults() {
	if r.Policy == nil {
		r.Policy = defaultRetryPolicy()
	}
	if p := r.Policy.MaxAttempts(); r.MaxRetries == 0 && p >= NoRetries {
		r.MaxRetries = p
	}
	setDefault(&r.MaxRetries, defaultMaxRetries)
	setDefault(&r.MoverInterval, defaultMoverInterval)
	setDefault(&r.MoverBatch, defaultMoverBatch)
	setDefault(&r.MaxSnoozes, defaultMaxSnoozes)
	r.Outage.setDefaults()
}

func (r RetryConfig) validate() error {
	var errs []error
	if r.MaxRetries < NoRetries {
		errs = append(errs, fmt.Errorf("Retry.MaxRetries must be positive, 0 (default), RetryForever (-1) or NoRetries (-2), got %d", r.MaxRetries))
	}
	if r.Policy != nil {
		switch p := r.Policy.MaxAttempts(); {
		case p < NoRetries:
			errs = append(errs, fmt.Errorf("Retry.Policy's MaxAttempts must be positive, 0 (none stated), RetryForever (-1) or NoRetries (-2), got %d", p))
		case p != 0 && r.MaxRetries != 0 && capOf(p) != capOf(r.MaxRetries):
			errs = append(errs, fmt.Errorf("Retry.MaxRetries %d and Retry.Policy's MaxAttempts %d state two different retry caps: state it in one place", r.MaxRetries, p))
		}
	}
	errs = append(errs, durationPositive("Retry.MoverInterval", r.MoverInterval), positive("Retry.MoverBatch", r.MoverBatch))
	if r.MaxSnoozes < 0 && r.MaxSnoozes != NoRetries {
		errs = append(errs, fmt.Errorf("Retry.MaxSnoozes must be positive, 0 (default 100) or NoRetries (-2), got %d", r.MaxSnoozes))
	}
	errs = append(errs, r.Outage.validate())
	return errors.Join(errs...)
}

// capOf is a stated cap as a count of retries: 0 for NoRetries, -1 for ever.
func capOf(n int) int {
	if n == NoRetries {
		return 0
	}
	return max(n, -1)
}
