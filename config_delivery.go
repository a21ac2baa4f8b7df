package streamq

import (
	"errors"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

const defaultCloseTimeout = 5 * time.Second

// DeliveryConfig is how many messages are handed out at once, in what order, and how long
// Close waits for them.
type DeliveryConfig struct {
	// MaxInFlightPerPartition is how many messages of one partition may be unacked at once.
	// Default 1: ordered. Above 1, order within a partition is not kept, unless OrderByKey.
	MaxInFlightPerPartition int
	// OrderByKey keeps order per partition key instead of per partition: up to
	// MaxInFlightPerPartition handlers of a partition run at once, and the messages of one
	// key are handled one after another, in stream order; a retry holds back the later
	// messages of its key. It needs MaxInFlightPerPartition above 1. Default false.
	OrderByKey bool
	// PartitionKey is the key OrderByKey orders by. Default MetadataPartitionKey (the
	// Publisher's default). Set only with OrderByKey.
	PartitionKey func(topic string, msg *message.Message) string
	// MaxInFlight caps unacked messages across every subscription of this Subscriber: a
	// partition with a message ready waits for a slot (MetricsCollector.BackpressureWait).
	// Default 0: no cap beyond MaxInFlightPerPartition.
	MaxInFlight int
	// CloseTimeout bounds how long Close and a partition handover wait for in-flight
	// messages to be acked or nacked. Default 5s.
	CloseTimeout time.Duration
}

func (d *DeliveryConfig) setDefaults() {
	setDefault(&d.MaxInFlightPerPartition, 1)
	if d.PartitionKey == nil {
		d.PartitionKey = MetadataPartitionKey
	}
	setDefault(&d.CloseTimeout, defaultCloseTimeout)
}

func (d DeliveryConfig) validate() error {
	errs := []error{positive("Delivery.MaxInFlightPerPartition", d.MaxInFlightPerPartition),
		notNegative("Delivery.MaxInFlight", d.MaxInFlight), durationPositive("Delivery.CloseTimeout", d.CloseTimeout)}
	if d.OrderByKey && d.MaxInFlightPerPartition == 1 {
		errs = append(errs, errors.New("Delivery.OrderByKey needs Delivery.MaxInFlightPerPartition above 1 (with one message in flight a partition is ordered anyway)"))
	}
	return errors.Join(errs...)
}
