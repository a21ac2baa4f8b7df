package retry

import (
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Retry caps that are not a count, as RetryConfig.MaxRetries states them.
const (
	Forever   = -1 // retried until it succeeds
	NoRetries = -2 // dead-lettered at the first failure
)

// Backoff is the wait before retry number attempt (1 for the first retry).
type Backoff interface {
	NextBackoff(attempt int) time.Duration
}

// Config is how nacks are decided, already defaulted: the backoff, the retry cap (a count,
// Forever or NoRetries), how many snoozes a message gets (NoRetries: none), and how a
// partition waits out an outage.
type Config struct {
	Backoff    Backoff
	MaxRetries int
	MaxSnoozes int
	Outage     OutageConfig
}

// CapFor is the retry cap of a message: its codec.HeaderMaxRetries when it is a number (0:
// none, negative: for ever), else MaxRetries; -1: for ever.
func (c Config) CapFor(md message.Metadata) int {
	if v := md.Get(codec.HeaderMaxRetries); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return max(n, -1)
		}
	}
	return CapOf(c.MaxRetries)
}

// CapOf is a stated cap as a count of retries: 0 for NoRetries, -1 for ever.
func CapOf(n int) int {
	if n == NoRetries {
		return 0
	}
	return max(n, -1)
}

// OutageConfig is how a partition waits out a downstream outage, already defaulted: After
// failures in a row count as one (0: only marked failures), the first probe waits Backoff,
// each next one twice as long up to MaxBackoff.
type OutageConfig struct {
	After               int
	Backoff, MaxBackoff time.Duration
}

// wait is the wait before probe number probe (0: the first).
func (o OutageConfig) wait(probe int) time.Duration {
	d := o.Backoff
	for i := 0; i < probe && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}
