// Package codec is the default stream-entry format of streamq, shared with
// watermill-redisstream: "_watermill_message_uuid", "metadata" (a msgpack map of strings,
// absent or empty when there is none) and "payload" (raw bytes).
package codec

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Field names of the default format.
const (
	UUIDField     = "_watermill_message_uuid"
	MetadataField = "metadata"
	PayloadField  = "payload"
)

// ErrMalformed reports an entry that is not in the default format.
var ErrMalformed = errors.New("malformed stream entry")

// ErrReserved reports metadata using a key the format reserves.
var ErrReserved = errors.New("reserved metadata key")

// Encode returns the stream fields of a message.
func Encode(uuid string, md map[string]string, payload []byte) (map[string]any, error) {
	raw, err := encodeMetadata(uuid, md)
	if err != nil {
		return nil, err
	}
	return map[string]any{UUIDField: uuid, MetadataField: raw, PayloadField: payload}, nil
}

// AppendArgs appends the same fields as Encode to an XADD argument list: no map to build
// and walk on the publish path.
func AppendArgs(dst []any, uuid string, md map[string]string, payload []byte) ([]any, error) {
	raw, err := encodeMetadata(uuid, md)
	if err != nil {
		return nil, err
	}
	return append(dst, UUIDField, uuid, MetadataField, raw, PayloadField, payload), nil
}

func encodeMetadata(uuid string, md map[string]string) ([]byte, error) {
	if md[UUIDField] != "" {
		return nil, fmt.Errorf("%w: %q holds the message UUID", ErrReserved, UUIDField)
	}
	md = withoutResults(md)
	if len(md) == 0 {
		return nil, nil
	}
	raw, err := msgpack.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("marshal metadata of message %s: %w", uuid, err)
	}
	return raw, nil
}

// withoutResults is md without a Publish's results (HeaderPublishedPartition,
// HeaderPublishedStreamID): md itself when it holds neither, else a copy.
func withoutResults(md map[string]string) map[string]string {
	_, p := md[HeaderPublishedPartition]
	_, id := md[HeaderPublishedStreamID]
	if !p && !id {
		return md
	}
	out := make(map[string]string, len(md))
	for k, v := range md {
		if k != HeaderPublishedPartition && k != HeaderPublishedStreamID {
			out[k] = v
		}
	}
	return out
}

// Decode reads a message's UUID, metadata (never nil) and payload from stream fields as Redis
// returns them (strings).
func Decode(values map[string]any) (uuid string, md map[string]string, payload string, err error) {
	uuid, payload, err = Fields(values)
	if err != nil {
		return "", nil, "", err
	}
	md = map[string]string{}
	if err := MetadataInto(values, uuid, md); err != nil {
		return "", nil, "", err
	}
	return uuid, md, payload, nil
}

// Fields reads a message's UUID and payload from stream fields; MetadataInto reads the rest.
func Fields(values map[string]any) (uuid, payload string, err error) {
	uuid, ok := values[UUIDField].(string)
	if !ok || uuid == "" {
		return "", "", fmt.Errorf("%w: no %s field", ErrMalformed, UUIDField)
	}
	payload, ok = values[PayloadField].(string)
	if !ok {
		return "", "", fmt.Errorf("%w: message %s has no %s field", ErrMalformed, uuid, PayloadField)
	}
	return uuid, payload, nil
}

// MetadataInto adds the metadata of message uuid's stream fields to md (a non-nil map, such
// as the one message.NewMessage made).
func MetadataInto(values map[string]any, uuid string, md map[string]string) error {
	raw, _ := values[MetadataField].(string)
	if raw == "" {
		return nil
	}
	if err := decodeMetadata(raw, &md); err != nil {
		return fmt.Errorf("%w: metadata of message %s: %w", ErrMalformed, uuid, err)
	}
	return nil
}

func decodeMetadata(raw string, into *map[string]string) error {
	if err := Unmarshal(raw, into); err != nil {
		return err
	}
	if *into == nil {
		*into = map[string]string{}
	}
	return nil
}
