package streamq

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
	"github.com/streamq-dev/streamq/internal/streamid"
)

// settleConfig is the groups the settler follows.
type settleConfig struct {
	retry       RetryConfig
	marshaler   Marshaler
	stepTimeout time.Duration // Delivery.CloseTimeout: one Redis step of a handler goroutine
	payloads    PayloadConfig // a large replayed payload goes to a key of its own
}

// settler carries out decisions: each verdict is one call into internal/ (the ack batch, a
// fenced requeue, schedule, dead letter or replay script).
type settler struct {
	d     partDeps
	cfg   settleConfig
	base  context.Context // the Subscribe context: its values, not its cancellation
	acks  *acker
	wake  func(due time.Time) // the mover looks at the retry set by due (nil: no mover)
	pause func(time.Duration) bool
}

// apply carries out dec for entry e whose delivered message is m. done false means deliver
// e again; retried reports that a retry of m was written (its key waits for it).
func (s *settler) apply(e position.Entry, m *message.Message, dec decision) (done, retried bool) {
	if s.d.count.tracer != nil && dec.verdict.traced() {
		return s.tracedApply(e, m, dec)
	}
	return s.carryOut(e, m, dec)
}

func (s *settler) carryOut(e position.Entry, m *message.Message, dec decision) (done, retried bool) {
	switch dec.verdict {
	case ackIt:
		s.acks.add(e.ID, payload.Ref(e.Values))
		return true, false
	case replayIt:
		return s.replay(e, m, dec.drop, dec.all), false
	case dropIt:
		return s.drop(e), false
	case retryNow, retryLater:
		return s.retry(m, e, dec)
	case deadLetter:
		return s.deadLetter(m, e, dec.reason, dec.retries), false
	case redeliver:
		return s.pause(dec.wait), false
	default: // leavePending
		return true, false
	}
}

// retry appends the retry at once or parks it in the group's retry set; either way the
// original is acked in the same script. retried reports that the retry was written.
func (s *settler) retry(m *message.Message, e position.Entry, dec decision) (done, retried bool) {
	next := m.Copy()
	clearPublished([]*message.Message{next}) // the handler may have published m: not stored
	clearOutcomeMarks(next.Metadata)
	if dec.snoozes > 0 { // a snooze: the retries and the last error stay as they were
		next.Metadata.Set(codec.HeaderSnoozeCount, strconv.Itoa(dec.snoozes))
	} else {
		next.Metadata.Set(LastErrorMetadata, dec.reason)
	}
	if dec.retries > 0 {
		next.Metadata.Set(RetryCountMetadata, strconv.Itoa(dec.retries))
	}
	next.Metadata.Set(RetryGroupMetadata, s.d.group())
	if next.Metadata.Get(OriginalIDMetadata) == "" {
		next.Metadata.Set(OriginalIDMetadata, e.ID)
	}
	fields, err := s.cfg.marshaler.Marshal(s.d.keys.Topic, next)
	if err != nil {
		return s.deadLetter(m, e, "cannot marshal retry: "+err.Error(), dec.retries-1), false
	}
	ctx, cancel := s.stepCtx()
	defer cancel()
	var held bool
	if dec.verdict == retryNow {
		held, err = s.requeue(ctx, e, fields)
	} else {
		held, err = s.schedule(ctx, next, e, dec, fields)
	}
	if err == nil && dec.snoozes == 0 {
		s.d.count.metrics.Retried(s.d.count.labels)
	}
	return s.settled(err, held, "retry", e), err == nil
}

func (s *settler) requeue(ctx context.Context, e position.Entry, fields map[string]any) (bool, error) {
	flat, err := retry.Flatten(fields)
	if err != nil {
		return false, err
	}
	_, held, err := retry.Requeue(ctx, s.d.rdb, s.d.fence, s.d.keys.Read, s.d.group(), e.ID, flat)
	return held, err
}

func (s *settler) schedule(ctx context.Context, next *message.Message, e position.Entry, dec decision, fields map[string]any) (bool, error) {
	k := s.d.keys
	item, err := retry.NewItem(retry.Origin{Topic: k.Topic, Partition: k.Index, RetryCount: dec.retries,
		MaxRetries: s.cfg.retry.capFor(next.Metadata), OriginalID: next.Metadata.Get(OriginalIDMetadata), Group: k.Group}, fields)
	if err != nil {
		return false, err
	}
	held, err := retry.Schedule(ctx, s.d.rdb, s.d.fence, k.Read, k.Retry, k.RetryItems, k.Group, e.ID, retry.NewItemID(), dec.due, item)
	if err == nil && s.wake != nil {
		s.wake(dec.due)
	}
	return held, err
}

// deadLetter writes m to the partition's DLQ and acks it, in one script.
func (s *settler) deadLetter(m *message.Message, e position.Entry, reason string, retries int) bool {
	md := message.Metadata{}
	for k, v := range m.Metadata {
		md[k] = v
	}
	for _, k := range []string{RetryGroupMetadata, ReplayMetadata, DropMetadata,
		PublishedPartitionMetadata, PublishedStreamIDMetadata} { // the handler may have published m
		delete(md, k) // marks for this delivery, not for the dead letter's
	}
	clearOutcomeMarks(md)
	md[DeadLetterMetadata] = reason
	fields, err := codec.Encode(m.UUID, md, m.Payload)
	if err != nil {
		fields, _ = codec.Encode(m.UUID, nil, m.Payload)
	}
	rec := s.record(e, reason, retries, s.cfg.retry.capFor(m.Metadata))
	rec.OriginalMessageID = firstNonEmpty(m.Metadata.Get(OriginalIDMetadata), e.ID)
	rec.Timestamp = streamid.Time(rec.OriginalMessageID)
	rec.Headers, rec.Message = headersOf(md), fields
	return s.writeDeadLetter(e, rec)
}

// poison dead-letters an entry that cannot be decoded, keeping its raw fields. On a DLQ it
// is acked and left in place.
func (s *settler) poison(e position.Entry, cause error) {
	s.d.count.stats.malformed.Add(1)
	s.d.log.Error("Malformed stream entry, moving it to the DLQ", cause,
		watermill.LogFields{"stream_id": e.ID, "stream": s.d.keys.Read})
	if !s.d.rules.retries {
		s.d.log.Info("Malformed entry in a DLQ acked and left in place", watermill.LogFields{"stream_id": e.ID})
		s.acks.add(e.ID, "")
		return
	}
	raw, _ := json.Marshal(e.Values)
	body, _ := e.Values[PayloadField].(string)
	reason := "malformed entry: " + cause.Error()
	md := map[string]string{DeadLetterMetadata: reason}
	fields, _ := codec.Encode(watermill.NewUUID(), md, []byte(body))
	rec := s.record(e, reason, 0, 0)
	rec.OriginalMessageID, rec.Raw, rec.Headers, rec.Message = e.ID, string(raw), headersOf(md), fields
	s.writeDeadLetter(e, rec)
}

// payloadMissing dead-letters an entry whose offloaded payload is gone, flagged for operators.
func (s *settler) payloadMissing(e position.Entry, ref string) {
	s.d.count.stats.payloadMissing.Add(1)
	s.d.count.metrics.PayloadMissing(s.d.count.labels)
	reason := "offloaded payload missing: " + ref
	uuid, md, _, err := codec.Decode(e.Values)
	if err != nil {
		uuid, md = watermill.NewUUID(), map[string]string{}
	}
	md[PayloadMissingMetadata] = "true"
	md[PayloadMissingRefMetadata] = ref
	md[DeadLetterMetadata] = reason
	fields, _ := codec.Encode(uuid, md, nil)
	rec := s.record(e, reason, retryCount(md), s.cfg.retry.capFor(md))
	rec.OriginalMessageID = firstNonEmpty(md[OriginalIDMetadata], e.ID)
	rec.Headers, rec.Message = headersOf(md), fields
	s.writeDeadLetter(e, rec)
}

func (s *settler) record(e position.Entry, reason string, retries, maxRetries int) dlq.Record {
	return dlq.Record{
		OriginalTopic: s.d.keys.Topic, Partition: s.d.keys.Index, OriginalStreamID: e.ID,
		RetryCount: retries, MaxRetries: maxRetries, Timestamp: streamid.Time(e.ID), FailedAt: s.d.clock.Now(),
		Reason: reason, Group: s.d.group(),
	}
}

func (s *settler) writeDeadLetter(e position.Entry, rec dlq.Record) bool {
	ctx, cancel := s.stepCtx()
	defer cancel()
	_, held, err := dlq.Add(ctx, s.d.rdb, s.d.fence, s.d.keys.Read, s.d.keys.DLQ, s.d.group(), e.ID, rec)
	if err == nil {
		s.d.count.stats.deadLettered.Add(1)
		s.d.count.metrics.DeadLettered(s.d.count.labels)
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
	defer func() { s.d.count.metrics.DLQReplay(s.d.keys.Topic, clock.Since(s.d.clock, start)) }()
	entry, err := dlq.Rebuild(handledLetter(e.Values, m), e.ID, allGroups, dlq.Offloading{
		Threshold: s.cfg.payloads.Threshold, TTL: s.cfg.payloads.TTL, Key: s.d.keys.Payload, Index: s.d.keys.PayloadIndex})
	if err == nil {
		f := s.d.fence
		_, err = dlq.Replay(ctx, s.d.rdb, dlq.ReplayArgs{
			DLQStream: s.d.keys.Read, Stream: s.d.keys.Stream,
			ID: e.ID, Delete: drop, Fence: &f, Group: s.d.group(), Entry: entry,
		})
	}
	if errors.Is(err, dlq.ErrNotFound) {
		s.acks.add(e.ID, "") // deleted from the DLQ meanwhile: nothing to replay
		return true
	}
	return s.settled(err, false, "replay", e) // a DLQ: its acks have no bookkeeping
}

// drop acks a DLQ entry for this DLQ group and deletes it from the DLQ, in one script.
func (s *settler) drop(e position.Entry) bool {
	ctx, cancel := s.stepCtx()
	defer cancel()
	deleted, err := dlq.Drop(ctx, s.d.rdb, s.d.fence, s.d.keys.Read, s.d.group(), e.ID)
	if deleted {
		s.d.count.metrics.DLQDeleted(s.d.keys.Topic, 1)
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
		// The script acked the entry; the ack batch adds the policy, payload and frontier
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

// clearOutcomeMarks removes what a handler asked of one delivery (Outage, Snooze): a retry
// or a dead letter of the message does not carry it.
func clearOutcomeMarks(md message.Metadata) {
	delete(md, codec.HeaderOutage)
	delete(md, codec.HeaderSnooze)
}

// headersOf is the DLQ entry's headers field: the dead letter's metadata as JSON, its flags
// (reason, payload missing) included.
func headersOf(md map[string]string) string {
	b, _ := json.Marshal(md)
	return string(b)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// handledLetter is a DLQ entry's fields with its message as the DLQ handler left it: the
// record (group, partition, original id) stays, the message is m's.
func handledLetter(values map[string]any, m *message.Message) map[string]any {
	md := make(map[string]string, len(m.Metadata))
	for k, v := range m.Metadata {
		if k != DropMetadata {
			md[k] = v
		}
	}
	fields, err := codec.Encode(m.UUID, md, m.Payload)
	if err != nil {
		return values // metadata it cannot store: the letter as it was
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[k] = v
	}
	for k, v := range fields {
		if b, ok := v.([]byte); ok {
			v = string(b) // as Redis returns fields
		}
		out[k] = v
	}
	return out
}
