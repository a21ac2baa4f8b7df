package consume

import (
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/retry"
)

// nackHintText is logged once per Subscriber, at the first nack that records no reason.
const nackHintText = "A message was nacked without a reason: add streamq.FailureMiddleware to the Router " +
	"(or set streamq.LastErrorMetadata before Nack) to record the handler's error in retries and dead letters"

// nackHint tells a Subscriber's user, once, that its nacks carry no reason, so retries and
// dead letters say only "nacked". The Consumer holds one; the partitions of a topic reach
// it through partDeps (nil on a DLQ view, where a nack is only delivered again). Safe for
// concurrent use; the zero value is ready.
type nackHint struct {
	said atomic.Bool
}

// note logs the hint on log when out is a nack of m with no reason recorded, unless it was
// logged before. A nil hint does nothing.
func (h *nackHint) note(log watermill.LoggerAdapter, out retry.Outcome, m *message.Message) {
	if h == nil || out != retry.Nacked || h.said.Load() || !unexplained(m) {
		return
	}
	if h.said.CompareAndSwap(false, true) {
		log.Info(nackHintText, nil)
	}
}

// unexplained reports a nacked message that states no reason: no DeadLetter, Drop, Outage or
// Snooze, and no LastErrorMetadata other than the "nacked" a retry of an unexplained nack
// carries (see failureReason).
func unexplained(m *message.Message) bool {
	md := m.Metadata
	return md.Get(codec.HeaderDeadLetter) == "" && md.Get(codec.HeaderDrop) == "" && md.Get(codec.HeaderOutage) == "" &&
		md.Get(codec.HeaderSnooze) == "" && retry.FailureReason(m) == "nacked"
}

// nackHint is the Consumer's hint for the partitions of sub; nil on a DLQ view.
func (sub *subscription) nackHint() *nackHint {
	if !sub.rules.retries {
		return nil
	}
	return sub.hint
}
