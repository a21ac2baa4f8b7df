package retry

import (
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Outcome is how a handler answered one delivery.
type Outcome int

// The outcomes of a delivery.
const (
	Acked   Outcome = iota
	Nacked          // the handler nacked: a failure, a Snooze, an Outage or a DeadLetter
	Stopped         // the partition stopped before the handler answered
)

// Verdict is what becomes of one delivered entry.
type Verdict int

// The verdicts Decide gives.
const (
	AckIt        Verdict = iota // ack (with the ack-delete policy, payload and frontier bookkeeping)
	ReplayIt                    // append the dead letter back to its partition, ack it here (and delete it: Drop)
	DropIt                      // ack the dead letter here and delete it from the DLQ
	RetryNow                    // append the retry to the partition at once, ack the original
	RetryLater                  // park the retry in the group's retry set until due, ack the original
	DeadLetter                  // write it to the partition's DLQ, ack the original
	Redeliver                   // deliver it again after Wait
	WaitOutage                  // hold it through a downstream outage: the partition waits, then probes with it
	LeavePending                // the partition stopped: the entry stays pending for the next owner
)

// Writes reports whether carrying the verdict out writes a step of its own (a retry, a dead
// letter, a replay or a drop): an ack goes into the ack batch, a redelivery and a stop write
// nothing.
func (v Verdict) Writes() bool {
	switch v {
	case RetryNow, RetryLater, DeadLetter, ReplayIt, DropIt:
		return true
	default:
		return false
	}
}

// Decision is a verdict with what carrying it out needs.
type Decision struct {
	Verdict Verdict
	Drop    bool          // ReplayIt: delete the dead letter once replayed
	All     bool          // ReplayIt: deliver the replay to every group, not only the failing one
	Reason  string        // why it is retried or dead-lettered
	Retries int           // retries so far (dead letter) or the number of this retry
	Wait    time.Duration // Redeliver: after this long
	Due     time.Time     // RetryLater: when the retry is appended
	Snoozes int           // a snooze (RetryNow, RetryLater): the message's snoozes, this one included
}

// Rules are what the subscription reads: a topic's partitions (Retries) or its dead letters
// (Letters and Replays).
type Rules struct {
	// Retries: a nack retries with backoff, then dead-letters. Otherwise (a DLQ) a nack
	// delivers the letter again after the backoff: a DLQ has no DLQ.
	Retries bool
	// Replays: an ack of a letter marked with Replay appends it back to its partition.
	Replays bool
	// Letters: a letter marked with Drop is deleted from the DLQ when its handler finishes.
	Letters bool
}

// Run is what Decide knows of the partition's last deliveries: the failures in a row before
// this one.
type Run struct{ InARow int }

// Decide is the one place that turns a delivery's outcome into a verdict, from the message,
// the rules of what the subscription reads, the retry config and the partition's run of
// failures; now is when the nack came. It does no I/O.
func Decide(now time.Time, rules Rules, cfg Config, out Outcome, m *message.Message, run Run) Decision {
	drop := rules.Letters && m.Metadata.Get(codec.HeaderDrop) != ""
	switch {
	case out == Stopped:
		return Decision{Verdict: LeavePending}
	case out == Acked && rules.Replays && m.Metadata.Get(codec.HeaderReplay) != "":
		return Decision{Verdict: ReplayIt, Drop: drop, All: m.Metadata.Get(codec.HeaderReplay) == codec.ReplayAllGroups}
	case drop: // acked or nacked: Drop, or DeadLetter on a dead letter
		return Decision{Verdict: DropIt}
	case out == Acked:
		return Decision{Verdict: AckIt}
	}
	retries := Count(m.Metadata)
	if !rules.Retries { // a DLQ has no DLQ: a nacked letter waits and comes again
		return Decision{Verdict: Redeliver, Wait: cfg.Backoff.NextBackoff(retries + 1)}
	}
	return decideFailure(now, cfg, m, run, retries)
}

// decideFailure decides a nack on a topic: a dead letter asked for, a snooze, an outage, the
// cap reached, or a retry after the backoff.
func decideFailure(now time.Time, cfg Config, m *message.Message, run Run, retries int) Decision {
	reason := FailureReason(m)
	if asked := m.Metadata.Get(codec.HeaderDeadLetter); asked != "" {
		return Decision{Verdict: DeadLetter, Reason: asked, Retries: retries}
	}
	if d, ok := snoozedFor(m); ok {
		n := snoozeCount(m.Metadata)
		if cfg.MaxSnoozes != NoRetries && n < cfg.MaxSnoozes {
			return snooze(now, d, retries, n+1)
		}
		reason = fmt.Sprintf("snoozed more than %d times", max(cfg.MaxSnoozes, 0))
	}
	if isOutage(m, cfg.Outage, run) {
		if marked := m.Metadata.Get(codec.HeaderOutage); marked != "" {
			reason = marked
		}
		return Decision{Verdict: WaitOutage, Reason: reason}
	}
	if limit := cfg.CapFor(m.Metadata); limit >= 0 && retries >= limit {
		return Decision{Verdict: DeadLetter, Reason: fmt.Sprintf("retries exhausted (%d): %s", retries, reason), Retries: retries}
	}
	backoff := delayOnErrorBackoff(m)
	if backoff < 0 {
		backoff = cfg.Backoff.NextBackoff(retries + 1)
	}
	if backoff <= DirectThreshold {
		return Decision{Verdict: RetryNow, Reason: reason, Retries: retries + 1}
	}
	return Decision{Verdict: RetryLater, Reason: reason, Retries: retries + 1, Due: now.Add(backoff)}
}

// snooze brings a message back after d with its retries unchanged.
func snooze(now time.Time, d time.Duration, retries, snoozes int) Decision {
	if d <= DirectThreshold {
		return Decision{Verdict: RetryNow, Retries: retries, Snoozes: snoozes}
	}
	return Decision{Verdict: RetryLater, Retries: retries, Snoozes: snoozes, Due: now.Add(d)}
}

// isOutage reports whether a failure is a downstream outage: marked so by the handler, or
// the After-th failure in a row of the partition (each failure while such an outage lasts).
func isOutage(m *message.Message, cfg OutageConfig, run Run) bool {
	if m.Metadata.Get(codec.HeaderOutage) != "" {
		return true
	}
	return cfg.After > 0 && run.InARow+1 >= cfg.After
}
