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
