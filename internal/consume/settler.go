package consume

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/retry"
)

// settleConfig is what the settler follows.
type settleConfig struct {
	retry       retry.Config
	marshal     func(topic string, msg *message.Message) (map[string]any, error)
	stepTimeout time.Duration // Delivery.CloseTimeout: one Redis step of a handler goroutine
	payloads    Payloads      // a large replayed payload goes to a key of its own
	hooks       Hooks         // nil: no tracing
}

// settler carries out decisions: each verdict is one step of the partition's store (the ack
// batch, a fenced requeue, schedule, dead letter, replay or drop).
type settler struct {
	d     partDeps
	store settleStore
	cfg   settleConfig
	base  context.Context // the Subscribe context: its values, not its cancellation
	acks  *acker
	wake  func(due time.Time) // the mover looks at the retry set by due (nil: no mover)
	pause func(time.Duration) bool
}

// apply carries out dec for entry e whose delivered message is m. done false means deliver
// e again; retried reports that a retry of m was written (its key waits for it).
func (s *settler) apply(e position.Entry, m *message.Message, dec retry.Decision) (done, retried bool) {
	if s.cfg.hooks != nil && dec.Verdict.Writes() {
		return s.tracedApply(e, m, dec)
	}
	return s.carryOut(e, m, dec)
}

// tracedApply is apply for a step that writes, under tracing hooks: its span covers the step.
func (s *settler) tracedApply(e position.Entry, m *message.Message, dec retry.Decision) (done, retried bool) {
	end := s.cfg.hooks.StartSettle(m, Settlement{Step: stepOf(dec.Verdict), Topic: s.d.topic, Partition: s.d.keys.Index,
		Group: s.d.group(), StreamID: e.ID, Reason: dec.Reason, Retry: dec.Retries, Due: dec.Due})
	done, retried = s.carryOut(e, m, dec)
	if dec.Verdict == retry.RetryNow || dec.Verdict == retry.RetryLater {
		end(retried)
	} else {
		end(done)
	}
	return done, retried
}

func (s *settler) carryOut(e position.Entry, m *message.Message, dec retry.Decision) (done, retried bool) {
	switch dec.Verdict {
	case retry.AckIt:
		s.acks.add(e.ID, payload.Ref(e.Values))
		return true, false
	case retry.ReplayIt:
		return s.replay(e, m, dec.Drop, dec.All), false
	case retry.DropIt:
		return s.drop(e), false
	case retry.RetryNow, retry.RetryLater:
		return s.retry(m, e, dec)
	case retry.DeadLetter:
		return s.deadLetter(m, e, dec.Reason, dec.Retries), false
	case retry.Redeliver:
		return s.pause(dec.Wait), false
	default: // LeavePending
		return true, false
	}
}

// retry appends the retry at once or parks it in the group's retry set; either way the
// original is acked in the same step. retried reports that the retry was written.
func (s *settler) retry(m *message.Message, e position.Entry, dec retry.Decision) (done, retried bool) {
	next := retryOf(m, e.ID, s.d.group(), dec)
	fields, err := s.cfg.marshal(s.d.keys.Topic, next)
	if err != nil {
		return s.deadLetter(m, e, "cannot marshal retry: "+err.Error(), dec.Retries-1), false
	}
	ctx, cancel := s.stepCtx()
	defer cancel()
	var held bool
	if dec.Verdict == retry.RetryNow {
		held, err = s.requeue(ctx, e, fields)
	} else {
		held, err = s.schedule(ctx, next, e, dec, fields)
	}
	if err == nil && dec.Snoozes == 0 {
		s.d.count.Retried()
	}
	return s.settled(err, held, "retry", e), err == nil
}

// retryOf is the message a retry of m (delivered as entry id to group) appends: its marks of
// this delivery gone, its retry count and reason, or its snooze count (a snooze keeps the
// retries and the last error as they were), the group it is for and its first entry's id.
func retryOf(m *message.Message, id, group string, dec retry.Decision) *message.Message {
	next := m.Copy()
	codec.ClearDeliveryMarks(next.Metadata) // the handler may have published m: not stored
	if dec.Snoozes > 0 {
		next.Metadata.Set(codec.HeaderSnoozeCount, strconv.Itoa(dec.Snoozes))
	} else {
		next.Metadata.Set(codec.HeaderLastError, dec.Reason)
	}
	if dec.Retries > 0 {
		next.Metadata.Set(codec.HeaderRetryCount, strconv.Itoa(dec.Retries))
	}
	next.Metadata.Set(codec.HeaderRetryGroup, group)
	if next.Metadata.Get(codec.HeaderOriginalID) == "" {
		next.Metadata.Set(codec.HeaderOriginalID, id)
	}
	return next
}

func (s *settler) requeue(ctx context.Context, e position.Entry, fields map[string]any) (bool, error) {
	flat, err := retry.Flatten(fields)
	if err != nil {
		return false, err
	}
	return s.store.Requeue(ctx, e.ID, flat)
}

func (s *settler) schedule(ctx context.Context, next *message.Message, e position.Entry, dec retry.Decision, fields map[string]any) (bool, error) {
	k := s.d.keys
	item, err := retry.NewItem(retry.Origin{Topic: k.Topic, Partition: k.Index, RetryCount: dec.Retries,
		MaxRetries: s.cfg.retry.CapFor(next.Metadata), OriginalID: next.Metadata.Get(codec.HeaderOriginalID), Group: k.Group}, fields)
	if err != nil {
		return false, err
	}
	held, err := s.store.Schedule(ctx, e.ID, dec.Due, item)
	if err == nil && s.wake != nil {
		s.wake(dec.Due)
	}
	return held, err
}

// deadLetter writes m to the partition's DLQ and acks it, in one step.
func (s *settler) deadLetter(m *message.Message, e position.Entry, reason string, retries int) bool {
	f := s.failure(e, reason)
	f.UUID, f.Metadata, f.Payload = m.UUID, m.Metadata, m.Payload
	f.OriginalID = dlq.OriginalID(m.Metadata, e.ID)
	f.RetryCount, f.MaxRetries = retries, s.cfg.retry.CapFor(m.Metadata)
	return s.writeDeadLetter(e, f)
}

// poison dead-letters an entry that cannot be decoded, keeping its raw fields. On a DLQ it
// is acked and left in place.
func (s *settler) poison(e position.Entry, cause error) {
	s.d.stats.malformed.Add(1)
	s.d.log.Error("Malformed stream entry, moving it to the DLQ", cause,
		watermill.LogFields{"stream_id": e.ID, "stream": s.d.keys.Read})
	if !s.d.rules.retries {
		s.d.log.Info("Malformed entry in a DLQ acked and left in place", watermill.LogFields{"stream_id": e.ID})
		s.acks.add(e.ID, "")
		return
	}
	raw, _ := json.Marshal(e.Values)
	body, _ := e.Values[codec.PayloadField].(string)
	f := s.failure(e, "malformed entry: "+cause.Error())
	f.UUID, f.Payload, f.OriginalID, f.Raw = watermill.NewUUID(), []byte(body), e.ID, string(raw)
	s.writeDeadLetter(e, f)
}

// payloadMissing dead-letters an entry whose offloaded payload is gone, flagged for operators.
func (s *settler) payloadMissing(e position.Entry, ref string) {
	s.d.stats.payloadMissing.Add(1)
	s.d.count.PayloadMissing()
	uuid, md, _, err := codec.Decode(e.Values)
	if err != nil {
		uuid, md = watermill.NewUUID(), map[string]string{}
	}
	md[codec.HeaderPayloadMissing] = "true"
	md[codec.HeaderPayloadMissingRef] = ref
	f := s.failure(e, "offloaded payload missing: "+ref)
	f.UUID, f.Metadata, f.OriginalID = uuid, md, dlq.OriginalID(md, e.ID)
	f.RetryCount, f.MaxRetries = retry.Count(md), s.cfg.retry.CapFor(md)
	s.writeDeadLetter(e, f)
}

// failure is the dead letter of entry e of the partition, failed for reason now.
func (s *settler) failure(e position.Entry, reason string) dlq.Failure {
	return dlq.Failure{Topic: s.d.keys.Topic, Partition: s.d.keys.Index, StreamID: e.ID,
		Reason: reason, Group: s.d.group(), FailedAt: s.d.clock.Now()}
}

func (s *settler) writeDeadLetter(e position.Entry, f dlq.Failure) bool {
	rec, err := dlq.NewRecord(f)
	if err != nil { // metadata that cannot be stored: the letter without it
		f.Metadata = nil
		rec, _ = dlq.NewRecord(f)
	}
	ctx, cancel := s.stepCtx()
	defer cancel()
	held, err := s.store.DeadLetter(ctx, e.ID, rec)
	if err == nil {
		s.d.stats.deadLettered.Add(1)
		s.d.count.DeadLettered()
		s.d.log.Info("Message dead-lettered", watermill.LogFields{"stream_id": e.ID, "reason": rec.Reason})
	}
	return s.settled(err, held, "dead-letter", e)
}

// replay appends a DLQ entry back to its partition, as the handler left its message m (a
// fixed payload or metadata is what is replayed), and acks it for this DLQ group (and
// deletes it from the DLQ when drop).
func (s *settler) replay(e position.Entry, m *message.Message, drop, allGroups bool) bool {
	ctx, cancel := s.stepCtx()
	defer cancel()
	start := s.d.clock.Now()
	defer func() { s.d.count.DLQReplay(clock.Since(s.d.clock, start)) }()
	md := make(map[string]string, len(m.Metadata))
	for k, v := range m.Metadata {
		if k != codec.HeaderDrop {
			md[k] = v
		}
	}
	k := s.d.keys
	entry, err := dlq.Rebuild(dlq.WithMessage(e.Values, m.UUID, md, m.Payload), e.ID, allGroups, dlq.Offloading{
		Threshold: s.cfg.payloads.Threshold, TTL: s.cfg.payloads.TTL, Key: k.Payload, Index: k.PayloadIndex})
	if err == nil {
		err = s.store.Replay(ctx, e.ID, entry, drop)
	}
	if errors.Is(err, dlq.ErrNotFound) {
		s.acks.add(e.ID, "") // deleted from the DLQ meanwhile: nothing to replay
		return true
	}
	return s.settled(err, false, "replay", e) // a DLQ: its acks have no bookkeeping
}

// drop acks a DLQ entry for this DLQ group and deletes it from the DLQ, in one step.
func (s *settler) drop(e position.Entry) bool {
	ctx, cancel := s.stepCtx()
	defer cancel()
	deleted, err := s.store.Drop(ctx, e.ID)
	if deleted {
		s.d.count.DLQDeleted(1)
		s.d.log.Info("Dead letter dropped", watermill.LogFields{"stream_id": e.ID})
	}
	return s.settled(err, false, "drop", e) // a DLQ: its acks have no bookkeeping
}

// settled reports whether a fenced step took effect; held is what the step reported: the
// group held the entry when the step acked it. A lost lease stops the partition; another
// error leaves the entry pending and is logged.
func (s *settler) settled(err error, held bool, step string, e position.Entry) bool {
	switch {
	case err == nil:
		// The step acked the entry; the ack batch adds the policy, payload and frontier
		// bookkeeping (its XACK is then a no-op, and held counts the group as done).
		s.acks.addSettled(e.ID, payload.Ref(e.Values), held)
		return true
	case errors.Is(err, fence.ErrLeaseLost):
		s.d.lost(err)
		return true
	default:
		s.d.log.Error("Could not "+step+" message; it is delivered again", err, watermill.LogFields{"stream_id": e.ID})
		return s.pause(time.Second)
	}
}

// stepCtx bounds one Redis step of a handler goroutine; it outlives the partition's stop so
// a retry decided during a drain still lands.
func (s *settler) stepCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(s.base), s.cfg.stepTimeout)
}

// firstNonEmpty is a unless it is empty, else b.
func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
