package streamq

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/position"
)

// The calls into a Tracer (see tracer.go). Each is reached from one place in the engine, and
// only when a Tracer is set: with none, Publish, the delivery and the settler run exactly as
// they would without this file.

// tracedPublish is Publish under PublisherConfig.Tracer: each message's span starts before
// it is marshaled (so the trace context the Tracer sets is stored with it) and ends with
// what became of that message.
func (p *Publisher) tracedPublish(topic string, msgs []*message.Message) error {
	ends := make([]func(error), len(msgs))
	for i, m := range msgs {
		if m != nil {
			ends[i] = p.config.Tracer.StartPublish(topic, m)
		}
	}
	err := apiError(p.publish(topic, msgs))
	for i, end := range ends {
		if end != nil {
			end(publishErrOf(msgs[i], err))
		}
	}
	return err
}

// publishErrOf is the error of one message of a Publish that returned err: none when Redis
// took it (an error for another message is not its own), unless too few replicas confirmed.
func publishErrOf(m *message.Message, err error) error {
	if err == nil {
		return nil
	}
	if _, written := PublishedPartition(m); written && !errors.Is(err, ErrNotReplicated) {
		return nil
	}
	return err
}

// tracedHandOut is handOut under SubscriberConfig.Tracer: the delivery span's context
// becomes the parent of the message's context, and the span ends with the handler's answer.
func (w *worker) tracedHandOut(dc *deliveryCtx, m *message.Message) (outcome, bool) {
	ctx, end := w.d.count.tracer.StartDelivery(dc.parent, m, dc.d.info())
	dc.parent = ctx
	out, deferred := w.handOut(dc, m)
	end(deliveryOutcomeOf(out, deferred))
	return out, deferred
}

func deliveryOutcomeOf(out outcome, deferred bool) DeliveryOutcome {
	switch {
	case deferred:
		return DeliveryDeferred
	case out == acked:
		return DeliveryAcked
	case out == nacked:
		return DeliveryNacked
	default:
		return DeliveryStopped
	}
}

// info is the delivery as a Tracer sees it.
func (d *delivery) info() DeliveryInfo {
	return DeliveryInfo{
		Topic: d.topic, Partition: d.partition, StreamID: d.streamID, OriginalID: d.originalID,
		ConsumerGroup: d.group, Consumer: d.consumer, DeliveryCount: d.count, RetryCount: d.retries,
		DeadLetter: d.letter,
	}
}

// traced reports whether a verdict's step gets a settle span: an ack goes into the ack
// batch, a redelivery and a stop write nothing.
func (v verdict) traced() bool {
	switch v {
	case retryNow, retryLater, deadLetter, replayIt, dropIt:
		return true
	default:
		return false
	}
}

// tracedApply is apply under SubscriberConfig.Tracer for a step that writes: its span
// covers the step.
func (s *settler) tracedApply(e position.Entry, m *message.Message, dec decision) (done, retried bool) {
	end := s.d.count.tracer.StartSettle(m, s.settlement(e, dec))
	done, retried = s.carryOut(e, m, dec)
	if dec.verdict == retryNow || dec.verdict == retryLater {
		end(retried)
	} else {
		end(done)
	}
	return done, retried
}

func (s *settler) settlement(e position.Entry, dec decision) Settlement {
	st := Settlement{Topic: s.d.count.labels.Topic, Partition: s.d.keys.Index, ConsumerGroup: s.d.group(),
		StreamID: e.ID, Reason: dec.reason, Retry: dec.retries}
	switch dec.verdict {
	case retryNow:
		st.Step = SettleRetry
	case retryLater:
		st.Step, st.Due = SettleRetry, dec.due
	case deadLetter:
		st.Step = SettleDeadLetter
	case replayIt:
		st.Step = SettleReplay
	default:
		st.Step = SettleDrop
	}
	return st
}
