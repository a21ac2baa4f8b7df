package streamq

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"
)

// The calls into a Tracer from Publish (see tracer.go; the Subscriber's reach the engine as
// its hooks, wire.go). Only when a Tracer is set: with none, Publish runs exactly as it would
// without this file.

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
