package streamq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// onAck acks e, or on a DLQ topic replays it first when the handler asked for it. It returns
// false when the entry should be delivered again (the replay could not be written).
func (w *worker) onAck(m *message.Message, e entry) bool {
	if w.sub.view.dlq && m.Metadata.Get(ReplayMetadata) != "" {
		return w.replay(e)
	}
	w.acks.add(e.id, payload.Ref(e.values))
	return true
}

// onNack decides what a nack means: dead letter (asked for, or retries exhausted) or a retry
// after the backoff. It returns false when the entry should simply be delivered again (on a
// DLQ topic, or when Redis could not take the retry).
func (w *worker) onNack(delivered, m *message.Message, e entry) bool {
	policy := w.sub.cfg.RetryPolicy
	retries := retryCount(m.Metadata)
	if w.sub.view.dlq {
		return w.pause(policy.NextBackoff(retries + 1))
	}
	reason := failureReason(m)
	if asked := m.Metadata.Get(DeadLetterMetadata); asked != "" {
		return w.deadLetter(m, e, asked, retries)
	}
	if limit := maxRetries(m.Metadata, w.sub.cfg); limit >= 0 && retries >= limit {
		return w.deadLetter(m, e, fmt.Sprintf("retries exhausted (%d): %s", retries, reason), retries)
	}
	backoff := delayOnErrorBackoff(delivered, m)
	if backoff < 0 {
		backoff = policy.NextBackoff(retries + 1)
	}
	return w.retry(m, e, retries+1, reason, backoff)
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
func delayOnErrorBackoff(_, m *message.Message) time.Duration {
	if m.Metadata.Get(delay.DelayedUntilKey) == "" {
		return -1
	}
	d, err := time.ParseDuration(m.Metadata.Get(delay.DelayedForKey))
	if err != nil || d < 0 {
		return -1
	}
	return d
}

// retry appends the retry at once (backoff <= retry.DirectThreshold) or parks it in the
// group's retry set; either way the original is acked in the same script.
func (w *worker) retry(m *message.Message, e entry, attempt int, reason string, backoff time.Duration) bool {
	next := m.Copy()
	next.Metadata.Set(RetryCountMetadata, strconv.Itoa(attempt))
	next.Metadata.Set(LastErrorMetadata, reason)
	next.Metadata.Set(RetryGroupMetadata, w.sub.cfg.ConsumerGroup)
	if next.Metadata.Get(OriginalIDMetadata) == "" {
		next.Metadata.Set(OriginalIDMetadata, e.id)
	}
	fields, err := w.sub.cfg.Marshaler.Marshal(w.sub.view.topic, next)
	if err != nil {
		return w.deadLetter(m, e, "cannot marshal retry: "+err.Error(), attempt-1)
	}
	ctx, cancel := w.stepCtx()
	defer cancel()
	if backoff <= retry.DirectThreshold {
		err = w.requeue(ctx, e, fields)
	} else {
		err = w.schedule(ctx, next, e, attempt, fields, time.Now().Add(backoff))
	}
	if err == nil {
		w.sub.cfg.Metrics.Retried(w.labels())
	}
	return w.settled(err, "retry", e)
}

func (w *worker) requeue(ctx context.Context, e entry, fields map[string]any) error {
	flat, err := retry.Flatten(fields)
	if err != nil {
		return err
	}
	_, err = retry.Requeue(ctx, w.sub.rdb, w.fence(), w.stream, w.sub.cfg.ConsumerGroup, e.id, flat)
	return err
}

func (w *worker) schedule(ctx context.Context, next *message.Message, e entry, attempt int, fields map[string]any, due time.Time) error {
	item, err := retry.NewItem(w.sub.view.topic, w.p, attempt, maxRetries(next.Metadata, w.sub.cfg),
		next.Metadata.Get(OriginalIDMetadata), w.sub.cfg.ConsumerGroup, fields)
	if err != nil {
		return err
	}
	set := w.retrySet()
	err = retry.Schedule(ctx, w.sub.rdb, w.fence(), w.stream, set.ZSet, set.Items, w.sub.cfg.ConsumerGroup,
		e.id, retry.NewItemID(), due, item)
	if err == nil {
		w.mover.wakeAt(due)
	}
	return err
}

// deadLetter writes m to the partition's DLQ and acks it, in one script.
func (w *worker) deadLetter(m *message.Message, e entry, reason string, retries int) bool {
	md := message.Metadata{}
	for k, v := range m.Metadata {
		md[k] = v
	}
	delete(md, RetryGroupMetadata)
	md[DeadLetterMetadata] = reason
	fields, err := codec.Encode(m.UUID, md, m.Payload)
	if err != nil {
		fields, _ = codec.Encode(m.UUID, nil, m.Payload)
	}
	headers, _ := json.Marshal(map[string]string(md))
	rec := w.record(e, reason, retries, maxRetries(m.Metadata, w.sub.cfg))
	rec.OriginalMessageID = firstNonEmpty(m.Metadata.Get(OriginalIDMetadata), e.id)
	rec.Timestamp = streamid.Time(rec.OriginalMessageID)
	rec.Headers, rec.Message = string(headers), fields
	return w.writeDeadLetter(e, rec)
}

// poison dead-letters an entry that cannot be decoded, keeping its raw fields.
func (w *worker) poison(e entry, cause error) {
	w.sub.s.stats.malformed.Add(1)
	w.sub.logger.Error("Malformed stream entry, moving it to the DLQ", cause,
		watermill.LogFields{"partition": w.p, "stream_id": e.id, "stream": w.stream})
	raw, _ := json.Marshal(e.values)
	payload, _ := e.values[PayloadField].(string)
	reason := "malformed entry: " + cause.Error()
	fields, _ := codec.Encode(watermill.NewUUID(), map[string]string{DeadLetterMetadata: reason}, []byte(payload))
	rec := w.record(e, reason, 0, 0)
	rec.OriginalMessageID, rec.Raw, rec.Headers, rec.Message = e.id, string(raw), "{}", fields
	if w.sub.view.dlq {
		w.sub.logger.Info("Malformed entry in a DLQ acked and left in place", watermill.LogFields{"stream_id": e.id})
		w.acks.add(e.id, "")
		return
	}
	w.writeDeadLetter(e, rec)
}

func (w *worker) record(e entry, reason string, retries, maxRetries int) dlq.Record {
	return dlq.Record{
		OriginalTopic: w.sub.view.topic, Partition: w.p, OriginalStreamID: e.id,
		RetryCount: retries, MaxRetries: maxRetries, Timestamp: streamid.Time(e.id), FailedAt: time.Now(),
		Reason: reason, Group: w.sub.cfg.ConsumerGroup,
	}
}

func (w *worker) writeDeadLetter(e entry, rec dlq.Record) bool {
	ctx, cancel := w.stepCtx()
	defer cancel()
	_, err := dlq.Add(ctx, w.sub.rdb, w.fence(), w.stream, w.sub.view.space.DLQ(w.sub.view.topic, w.p),
		w.sub.cfg.ConsumerGroup, e.id, rec)
	if err == nil {
		w.sub.s.stats.deadLettered.Add(1)
		w.sub.cfg.Metrics.DeadLettered(w.labels())
		w.sub.logger.Info("Message dead-lettered", watermill.LogFields{"partition": w.p, "stream_id": e.id, "reason": rec.Reason})
	}
	return w.settled(err, "dead-letter", e)
}

// replay appends a DLQ entry back to its partition and acks it for this DLQ group.
func (w *worker) replay(e entry) bool {
	ctx, cancel := w.stepCtx()
	defer cancel()
	fields, err := dlq.ReplayFields(e.values, e.id)
	if err == nil {
		f := w.fence()
		_, err = dlq.Replay(ctx, w.sub.rdb, dlq.ReplayArgs{
			DLQStream: w.stream, Stream: w.sub.view.space.PartitionStream(w.sub.view.topic, w.p),
			ID: e.id, Fence: &f, Group: w.sub.cfg.ConsumerGroup, Fields: fields,
		})
	}
	if errors.Is(err, dlq.ErrNotFound) {
		w.acks.add(e.id, "") // deleted from the DLQ meanwhile: nothing to replay
		return true
	}
	return w.settled(err, "replay", e)
}

// settled reports whether a fenced step took effect. A lost lease stops the worker; another
// error leaves the entry pending and is logged.
func (w *worker) settled(err error, step string, e entry) bool {
	switch {
	case err == nil:
		// The script acked the entry; the ack batch adds the policy, payload and frontier
		// bookkeeping (its XACK is then a no-op).
		w.acks.add(e.id, payload.Ref(e.values))
		return true
	case errors.Is(err, fence.ErrLeaseLost):
		w.sub.loseLease(w, err)
		return true
	default:
		w.sub.logger.Error("Could not "+step+" message; it is delivered again", err,
			watermill.LogFields{"partition": w.p, "stream_id": e.id})
		return w.pause(time.Second)
	}
}

// pause waits d unless the worker stops first; true means it stopped.
func (w *worker) pause(d time.Duration) bool {
	if d <= 0 {
		return w.isStopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-w.stop:
		return true
	}
}

func (w *worker) fence() fence.Fence {
	return fence.Fence{Key: w.leaseKey, Token: w.token}
}

// stepCtx bounds one Redis step of a handler goroutine; it outlives the worker's stop so a
// retry decided during a drain still lands.
func (w *worker) stepCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(w.sub.ctx), w.sub.cfg.CloseTimeout)
}

func (w *worker) retrySet() retry.Set {
	sp, t, g := w.sub.view.space, w.sub.view.topic, w.sub.cfg.ConsumerGroup
	return retry.Set{ZSet: sp.Retry(t, w.p, g), Items: sp.RetryItems(t, w.p, g), Stream: w.stream, Partition: w.p}
}

func (w *worker) delaySet() retry.Set {
	sp, t := w.sub.view.space, w.sub.view.topic
	return retry.Set{ZSet: sp.Delay(t, w.p), Items: sp.DelayItems(t, w.p), Stream: w.stream, Partition: w.p}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
