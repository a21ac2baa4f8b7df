package publish

import (
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retry"
)

// writes builds the write of each message of msgs to topic, which has n partitions: an
// append, an offloaded append (a payload over the threshold) or a parking in the delay set
// (a message due later), made idempotent unless Idempotency is off.
func (e *Engine) writes(topic string, n int, msgs []*message.Message) ([]Write, error) {
	writes := make([]Write, len(msgs))
	for i, msg := range msgs {
		part, err := e.cfg.Route(topic, n, msg)
		if err != nil {
			return nil, err
		}
		writes[i].Partition = part
		slot := e.names.get(topic, part, n)
		e.idempotence(topic, slot, msg, &writes[i])
		due, delayed := e.delayedUntil(msg)
		if !delayed && e.offload.Offloads(len(msg.Payload)) {
			if writes[i].Offload, err = e.offloadArgs(topic, part, msg); err != nil {
				return nil, err
			}
			continue
		}
		if delayed {
			if writes[i].Park, err = e.parkArgs(topic, part, due, msg); err != nil {
				return nil, err
			}
			continue
		}
		if writes[i].XAdd, err = e.xaddCommand(topic, slot.stream, msg); err != nil {
			return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
		}
	}
	return writes, nil
}

// idempotence makes w's append idempotent: by producer and sequence number (numbered by
// the flusher that sends it, or as when the same message was sent before and not seen
// appended), or by its UUID under Idempotency.ByUUID and for a message whose UUID was
// derived from a consumed one (its x-derived-from header).
func (e *Engine) idempotence(topic string, slot *partitionSlot, msg *message.Message, w *Write) {
	idem := e.cfg.Idempotency
	switch {
	case !idem.on():
	case idem.ByUUID, msg.Metadata.Get(codec.HeaderDerivedFrom) != "": // a derived UUID: its send from another run is found by UUID
		w.Once = &Once{Prefix: slot.idem, Index: slot.index, UUID: msg.UUID, Window: idem.Window}
	default:
		w.Seq = &Sequenced{Record: slot.records, Name: slot.name, Index: slot.index, Window: idem.Window}
		e.resends.number(topic, msg.UUID, w)
	}
}

// offloadArgs stores the payload under its own key and the entry without it, pointing there.
func (e *Engine) offloadArgs(topic string, part int, msg *message.Message) (*payload.Offload, error) {
	light := msg.Copy()
	light.Payload = nil
	values, err := e.marshal(topic, light)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	return e.offload.Offload(topic, part, msg.Payload, values), nil
}

// parkArgs parks msg in its partition's delay set until due.
func (e *Engine) parkArgs(topic string, part int, due time.Time, msg *message.Message) (*retry.Park, error) {
	values, err := e.marshal(topic, msg)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	item, err := retry.NewItem(retry.Origin{Topic: topic, Partition: part, MaxRetries: -1}, values)
	if err != nil {
		return nil, fmt.Errorf("delay message %s: %w", msg.UUID, err)
	}
	return &retry.Park{ZSet: e.cfg.Space.Delay(topic, part), Items: e.cfg.Space.DelayItems(topic, part),
		ID: retry.NewItemID(), Due: due, Item: item}, nil
}

// delayedUntil reads Watermill's delay metadata (components/delay): the message is parked
// when it is due later than now. components/delay writes "until" in whole seconds, so the
// later of "until" and now + "for" is used: never early.
func (e *Engine) delayedUntil(msg *message.Message) (time.Time, bool) {
	var due time.Time
	if v := msg.Metadata.Get(delay.DelayedUntilKey); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			due = t
		}
	}
	if v := msg.Metadata.Get(delay.DelayedForKey); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			if t := e.cfg.Clock.Now().Add(d); t.After(due) {
				due = t
			}
		}
	}
	return due, !due.IsZero() && due.Sub(e.cfg.Clock.Now()) > retry.DirectThreshold
}

// marshal is msg's entry fields: Config.Marshal's, or the default entry format's.
func (e *Engine) marshal(topic string, msg *message.Message) (map[string]any, error) {
	if e.cfg.Marshal == nil {
		return codec.Encode(msg.UUID, msg.Metadata, msg.Payload)
	}
	return e.cfg.Marshal(topic, msg)
}
