package streamq

import (
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/retry"
)

// verdict is what becomes of one delivered entry.
type verdict int

const (
	ackIt        verdict = iota // ack (with the ack-delete policy, payload and frontier bookkeeping)
	replayIt                    // append the dead letter back to its partition, ack it here (and delete it: drop)
	dropIt                      // ack the dead letter here and delete it from the DLQ
	retryNow                    // append the retry to the partition at once, ack the original
	retryLater                  // park the retry in the group's retry set until due, ack the original
	deadLetter                  // write it to the partition's DLQ, ack the original
	redeliver                   // deliver it again after wait
	waitOutage                  // hold it through a downstream outage: the partition waits, then probes with it
	leavePending                // the partition stopped: the entry stays pending for the next owner
)

// decision is a verdict with what carrying it out needs.
type decision struct {
	verdict verdict
	drop    bool          // replayIt: delete the dead letter once replayed
	all     bool          // replayIt: deliver the replay to every group, not only the failing one
	reason  string        // why it is retried or dead-lettered
	retries int           // retries so far (dead letter) or the number of this retry
	wait    time.Duration // redeliver: after this long
	due     time.Time     // retryLater: when the retry is appended
	snoozes int           // a snooze (retryNow, retryLater): the message's snoozes, this one included
}

// failureRun is what decide knows of the partition's last deliveries: the failures in a row
// before this one.
type failureRun struct{ inARow int }

// decide is the one place that turns a delivery's outcome into a verdict, from the
// message, the rules of what the subscription reads, the retry policy and the partition's
// run of failures; now is when the nack came. It does no I/O.
func decide(now time.Time, rules topicRules, pol RetryConfig, out outcome, m *message.Message, run failureRun) decision {
	drop := rules.letters && m.Metadata.Get(DropMetadata) != ""
	switch {
	case out == stopped:
		return decision{verdict: leavePending}
	case out == acked && rules.replays && m.Metadata.Get(ReplayMetadata) != "":
		return decision{verdict: replayIt, drop: drop, all: m.Metadata.Get(ReplayMetadata) == replayAllGroups}
	case drop: // acked or nacked: Drop, or DeadLetter on a dead letter
		return decision{verdict: dropIt}
	case out == acked:
		return decision{verdict: ackIt}
	}
	retries := retryCount(m.Metadata)
	if !rules.retries { // a DLQ has no DLQ: a nacked letter waits and comes again
		return decision{verdict: redeliver, wait: pol.Policy.NextBackoff(retries + 1)}
	}
	reason := failureReason(m)
	if asked := m.Metadata.Get(DeadLetterMetadata); asked != "" {
		return decision{verdict: deadLetter, reason: asked, retries: retries}
	}
	if d, ok := snoozedFor(m); ok {
		n := snoozeCount(m.Metadata)
		if pol.MaxSnoozes != NoRetries && n < pol.MaxSnoozes {
			return snooze(now, d, retries, n+1)
		}
		reason = fmt.Sprintf("snoozed more than %d times", max(pol.MaxSnoozes, 0))
	}
	if isOutage(m, pol.Outage, run) {
		return decision{verdict: waitOutage, reason: firstNonEmpty(m.Metadata.Get(codec.HeaderOutage), reason)}
	}
	if limit := pol.capFor(m.Metadata); limit >= 0 && retries >= limit {
		return decision{verdict: deadLetter, reason: fmt.Sprintf("retries exhausted (%d): %s", retries, reason), retries: retries}
	}
	backoff := delayOnErrorBackoff(m)
	if backoff < 0 {
		backoff = pol.Policy.NextBackoff(retries + 1)
	}
	if backoff <= retry.DirectThreshold {
		return decision{verdict: retryNow, reason: reason, retries: retries + 1}
	}
	return decision{verdict: retryLater, reason: reason, retries: retries + 1, due: now.Add(backoff)}
}

// snooze brings a message back after d with its retries unchanged.
func snooze(now time.Time, d time.Duration, retries, snoozes int) decision {
	if d <= retry.DirectThreshold {
		return decision{verdict: retryNow, retries: retries, snoozes: snoozes}
	}
	return decision{verdict: retryLater, retries: retries, snoozes: snoozes, due: now.Add(d)}
}

// isOutage reports whether a failure is a downstream outage: marked so by the handler, or
// the After-th failure in a row of the partition (each failure while such an outage lasts).
func isOutage(m *message.Message, cfg OutageConfig, run failureRun) bool {
	if m.Metadata.Get(codec.HeaderOutage) != "" {
		return true
	}
	return cfg.After > 0 && run.inARow+1 >= cfg.After
}

// failureReason is the handler's recorded error, or "nacked".
func failureReason(m *message.Message) string {
	if r := m.Metadata.Get(LastErrorMetadata); r != "" {
		return r
	}
	return "nacked"
}

// delayOnErrorBackoff returns the delay middleware.DelayOnError wrote into the message during
// this delivery, or -1. Delivery removes _watermill_delayed_until from the handler's copy, so
// finding it again means the middleware set it now.
func delayOnErrorBackoff(m *message.Message) time.Duration {
	if m.Metadata.Get(delay.DelayedUntilKey) == "" {
		return -1
	}
	d, err := time.ParseDuration(m.Metadata.Get(delay.DelayedForKey))
	if err != nil || d < 0 {
		return -1
	}
	return d
}
