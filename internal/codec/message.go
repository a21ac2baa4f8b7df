package codec

import "github.com/ThreeDotsLabs/watermill/message"

// DecodeMessage reads DefaultMarshaler's fields into a message, the payload through payload
// (OwnedBytes for a reply the caller owns, a copy otherwise) and the metadata straight into
// the message's own map. A missing UUID or payload field, or metadata that is not one
// msgpack map of strings, is an ErrMalformed.
func DecodeMessage(values map[string]any, payload func(string) []byte) (*message.Message, error) {
	uuid, data, err := Fields(values)
	if err != nil {
		return nil, err
	}
	msg := message.NewMessage(uuid, payload(data))
	if err := MetadataInto(values, uuid, msg.Metadata); err != nil {
		return nil, err
	}
	return msg, nil
}
