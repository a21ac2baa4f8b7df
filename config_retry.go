package streamq

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

// RetryPolicy decides how late a nacked message is retried, and may state how many retries a
// message gets (RetryConfig.MaxRetries states it too: a config that states two different
// caps is rejected).
type RetryPolicy interface {
	// MaxAttempts is the retry cap the policy states, in RetryConfig.MaxRetries' terms: 0
	// states none (MaxRetries, or its default 3, decides), RetryForever, NoRetries or a
	// count.
	MaxAttempts() int
	// NextBackoff is the wait before retry number attempt (1 for the first retry).
	NextBackoff(attempt int) time.Duration
}

// ExponentialBackoff is the built-in RetryPolicy: Base * 2^(attempt-1), capped at Max
// (saturating, never overflowing), with optional Jitter. The default policy is
// ExponentialBackoff{Base: time.Second, Max: time.Minute}: 1 s, 2 s, 4 s, ...
type ExponentialBackoff struct {
	// Base is the first backoff. Zero retries at once.
	Base time.Duration
	// Max caps the backoff; below Base it is Base.
	Max time.Duration
	// Attempts is the retry cap, as RetryConfig.MaxRetries: 0 states none, RetryForever,
	// NoRetries or a count. State the cap in one of the two places.
	Attempts int
	// Jitter in [0, 1] lowers each backoff by a random fraction up to it. 0: none.
	Jitter float64
}

// defaultRetryPolicy waits 1 s, 2 s, 4 s ... capped at a minute.
func defaultRetryPolicy() ExponentialBackoff {
	return ExponentialBackoff{Base: time.Second, Max: time.Minute}
}

// MaxAttempts implements RetryPolicy.
func (e ExponentialBackoff) MaxAttempts() int { return e.Attempts }

// NextBackoff implements RetryPolicy.
func (e ExponentialBackoff) NextBackoff(attempt int) time.Duration {
	return exponential(e.Base, e.Max, attempt, e.Jitter)
}

// exponential returns base * 2^(attempt-1) capped at limit, without overflow: attempt <= 0
// reads as 1, and a cap below base gives base. jitter in [0, 1] spreads the result down by up
// to that fraction (0: none).
func exponential(base, limit time.Duration, attempt int, jitter float64) time.Duration {
	if base <= 0 {
		return 0
	}
	if limit < base {
		limit = base
	}
	if attempt < 1 {
		attempt = 1
	}
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		if d > limit/2 {
			d = limit
			break
		}
		d *= 2
	}
	d = min(d, limit)
	if jitter > 0 {
		d -= time.Duration(rand.Float64() * min(jitter, 1) * float64(d))
	}
	return d
}

const (
	defaultOutageBackoff    = time.Second
	defaultOutageMaxBackoff = 30 * time.Second
)

// OutageConfig is how a partition waits out a downstream outage: a failure marked with
// Outage (or an error wrapping ErrOutage under FailureMiddleware), or After failures in a
// row. The partition hands out no more messages; the failed one stays where it is and is
// delivered again after Backoff, then after twice as long, up to MaxBackoff, until it
// succeeds. Nothing is retried, dead-lettered or reordered meanwhile, and the lease is kept.
type OutageConfig struct {
	// After counts a run of this many failures in a row in one partition as an outage,
	// marked or not; the earlier ones of the run were retried as usual. Use it when a
	// handler cannot tell an outage from a bad message; a run of bad messages then holds
	// the partition too, until one succeeds. 0 (default): only marked failures.
	After int
	// Backoff is the wait before the first probe. Default 1s.
	Backoff time.Duration
	// MaxBackoff caps the doubling waits between probes. Default 30s.
	MaxBackoff time.Duration
}

func (o *OutageConfig) setDefaults() {
	setDefault(&o.Backoff, defaultOutageBackoff)
	setDefault(&o.MaxBackoff, defaultOutageMaxBackoff)
}

func (o OutageConfig) validate() error {
	var errs []error
	if o.After < 0 {
		errs = append(errs, fmt.Errorf("Retry.Outage.After must be 0 (off) or positive, got %d", o.After))
	}
	errs = append(errs, durationPositive("Retry.Outage.Backoff", o.Backoff),
		durationPositive("Retry.Outage.MaxBackoff", o.MaxBackoff))
	if o.MaxBackoff > 0 && o.MaxBackoff < o.Backoff {
		errs = append(errs, fmt.Errorf("Retry.Outage.MaxBackoff %s is below Retry.Outage.Backoff %s", o.MaxBackoff, o.Backoff))
	}
	return errors.Join(errs...)
}
