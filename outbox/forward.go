package outbox

import (
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
)

// streamOut is the publisher the Watermill forwarder hands the unwrapped messages to: the
// relay's streamq Publisher, timed and counted. The forwarder (watermill v1.5.1,
// components/forwarder) rebuilds each message from its envelope with the UUID and metadata
// it was published with, so streamq routes it by its partition key and recognises it by
// its UUID: nothing is patched here.
type streamOut struct {
	pub     *streamq.Publisher
	metrics *metrics
	moved   atomic.Int64 // messages published, read by the reporter
}

var _ message.Publisher = (*streamOut)(nil)

// Publish publishes msgs to topic through streamq. An error makes the forwarder nack the
// row's message, which watermill-sql sends again after ResendInterval, before any later row.
func (o *streamOut) Publish(topic string, msgs ...*message.Message) error {
	start := time.Now()
	err := o.pub.Publish(topic, msgs...)
	o.metrics.published(time.Since(start), len(msgs), err)
	if err == nil {
		o.moved.Add(int64(len(msgs)))
	}
	return err
}

// Close does nothing: the Relay closes the streamq Publisher after the forwarder stopped.
func (o *streamOut) Close() error { return nil }
