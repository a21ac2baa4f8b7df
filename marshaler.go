package streamq

import (
	"fmt"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/vmihailenco/msgpack/v5"
)

// Stream entry fields written by DefaultMarshaler; the same as watermill-redisstream's.
const (
	UUIDField     = "_watermill_message_uuid"
	MetadataField = "metadata"
	PayloadField  = "payload"
)

// Marshaler turns a message into the fields of a stream entry.
type Marshaler interface {
	Marshal(topic string, msg *message.Message) (map[string]any, error)
}

// Unmarshaler turns the fields of a stream entry back into a message. Errors should wrap
// ErrMalformedEntry: such entries are set aside, never retried.
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

// Marshal implements Marshaler.
func (DefaultMarshaler) Marshal(_ string, msg *message.Message) (map[string]any, error) {
	if msg.Metadata.Get(UUIDField) != "" {
		return nil, fmt.Errorf("%w: %q holds the message UUID", ErrReservedMetadata, UUIDField)
	}
	var md []byte
	if len(msg.Metadata) > 0 {
		var err error
		if md, err = msgpack.Marshal(map[string]string(msg.Metadata)); err != nil {
			return nil, fmt.Errorf("marshal metadata of message %s: %w", msg.UUID, err)
		}
	}
	return map[string]any{
		UUIDField:     msg.UUID,
		MetadataField: md,
		PayloadField:  []byte(msg.Payload),
	}, nil
}

// Unmarshal implements Unmarshaler. An entry without a UUID or a payload field, or with
// metadata that is not a msgpack map of strings, is an ErrMalformedEntry.
func (DefaultMarshaler) Unmarshal(values map[string]any) (*message.Message, error) {
	uuid, ok := values[UUIDField].(string)
	if !ok || uuid == "" {
		return nil, fmt.Errorf("%w: no %s field", ErrMalformedEntry, UUIDField)
	}
	payload, ok := values[PayloadField].(string)
	if !ok {
		return nil, fmt.Errorf("%w: message %s has no %s field", ErrMalformedEntry, uuid, PayloadField)
	}
	msg := message.NewMessage(uuid, []byte(payload))
	md, _ := values[MetadataField].(string)
	if md == "" {
		return msg, nil
	}
	if err := decodeMetadata(md, &msg.Metadata); err != nil {
		return nil, fmt.Errorf("%w: metadata of message %s: %w", ErrMalformedEntry, uuid, err)
	}
	return msg, nil
}

// decodeMetadata decodes one msgpack map of strings filling all of md; msgpack nil reads as
// empty metadata.
func decodeMetadata(md string, into *message.Metadata) error {
	r := strings.NewReader(md)
	dec := msgpack.NewDecoder(r)
	if err := dec.Decode(into); err != nil {
		return err
	}
	if r.Len() > 0 {
		return fmt.Errorf("%d bytes after the metadata map", r.Len())
	}
	if *into == nil {
		*into = message.Metadata{}
	}
	return nil
}
