package streamq

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Stream entry fields written by DefaultMarshaler; the same as watermill-redisstream's.
const (
	UUIDField     = codec.UUIDField
	MetadataField = codec.MetadataField
	PayloadField  = codec.PayloadField
)

// Marshaler turns a message into the fields of a stream entry.
type Marshaler interface {
	Marshal(topic string, msg *message.Message) (map[string]any, error)
}

// Unmarshaler turns the fields of a stream entry back into a message. Errors should wrap
// ErrMalformedEntry: such entries go to the dead-letter queue, never retried.
type Unmarshaler interface {
	Unmarshal(values map[string]any) (*message.Message, error)
}

// DefaultMarshaler writes the message UUID, the metadata as a msgpack map and the payload
// as raw bytes. It reads entries written by watermill-redisstream v1.4.x and the reverse.
type DefaultMarshaler struct{}

var (
	_ Marshaler   = DefaultMarshaler{}
	_ Unmarshaler = DefaultMarshaler{}
)

// Marshal implements Marshaler. Metadata "_watermill_message_uuid" is an ErrReservedMetadata.
func (DefaultMarshaler) Marshal(_ string, msg *message.Message) (map[string]any, error) {
	return codec.Encode(msg.UUID, msg.Metadata, msg.Payload)
}

// Unmarshal implements Unmarshaler. An entry without a UUID or a payload field, or with
// metadata that is not exactly one msgpack map of strings, is an ErrMalformedEntry.
func (DefaultMarshaler) Unmarshal(values map[string]any) (*message.Message, error) {
	return decodeMessage(values, func(s string) []byte { return []byte(s) })
}

// unmarshalReply is DefaultMarshaler.Unmarshal for the fields of a reply the worker just
// read: the payload is not copied, since the reply's strings are the worker's alone (go-redis
// allocates each one; the entry keeps only its payload reference once decoded).
func unmarshalReply(values map[string]any) (*message.Message, error) {
	return decodeMessage(values, codec.OwnedBytes)
}

// decodeMessage reads DefaultMarshaler's fields into a message, the payload through payload
// and the metadata straight into the message's own map.
func decodeMessage(values map[string]any, payload func(string) []byte) (*message.Message, error) {
	uuid, data, err := codec.Fields(values)
	if err != nil {
		return nil, err
	}
	msg := message.NewMessage(uuid, payload(data))
	if err := codec.MetadataInto(values, uuid, msg.Metadata); err != nil {
		return nil, err
	}
	return msg, nil
}
