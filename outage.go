package streamq

import (
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// ErrOutage marks a failure that is not the message's fault: the service the handler calls
// is down. Returned from a Router handler (wrapped, with FailureMiddleware installed) or
// through Outage, it pauses the message's partition instead of retrying the message
// (RetryConfig.Outage, docs/pipelines.md).
var ErrOutage = errors.New("downstream outage")

// Outage marks msg's failure as a downstream outage and returns an error wrapping ErrOutage
// and err, to be returned from the handler (or msg nacked):
//
//	if err := payments.Charge(ctx, order); err != nil && isUnavailable(err) {
//		return nil, streamq.Outage(msg, err)
//	}
//
// The partition then stops handing out messages and, after a backoff that doubles up to
// RetryConfig.Outage.MaxBackoff, delivers msg again as a probe; the first success resumes it
// in order. Waiting for an outage counts no retry against the message's cap. Under
// middleware.Retry, exclude it with ShouldRetry: !errors.Is(err, streamq.ErrOutage).
func Outage(msg *message.Message, err error) error {
	if err == nil {
		err = ErrOutage
	}
	msg.Metadata.Set(codec.HeaderOutage, err.Error())
	if errors.Is(err, ErrOutage) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrOutage, err)
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

// PartitionOutage is one partition waiting out a downstream outage (SubscriberStats.Outages,
// OutageReporter).
type PartitionOutage struct {
	Topic     string
	Partition int
	// Since is when the outage's first failure came; NextProbe when the held message is
	// delivered again; Probes how many probes failed so far.
	Since     time.Time
	NextProbe time.Time
	Probes    int
	// Reason is the last failure's reason.
	Reason string
}

// OutageReporter is implemented by a MetricsCollector that shows partitions waiting out a
// downstream outage (package metrics/prometheus does). A partition's lease holder calls
// Outage with the partition's labels when an outage starts and after each failed probe, and
// with a zero PartitionOutage (zero Since) when the partition resumes. Optional.
type OutageReporter interface {
	Outage(l Labels, o PartitionOutage)
}
