package dlq

import (
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// ErrNoUUID reports a dead letter without a message UUID: its entry could not be read back.
var ErrNoUUID = errors.New("dead letter without a message UUID")

// Failure is what one dead letter is made of: the message (its UUID, metadata and payload),
// where it failed, why, for which group, its retries, and when. The engine builds one for a
// message whose retries ran out or that a handler dead-lettered, for an entry that cannot be
// decoded and for one whose payload is gone; admin for a letter an operator adds.
type Failure struct {
	Topic     string
	Partition int
	UUID      string
	Metadata  map[string]string // copied; the marks of a delivery are left out
	Payload   []byte
	// StreamID is the entry that failed (a retry's own id); OriginalID the message's first
	// entry ("" when none is known, as for a letter an operator adds without one).
	StreamID, OriginalID   string
	Reason, Group          string
	RetryCount, MaxRetries int
	FailedAt               time.Time
	Raw                    string // the JSON of the fields of an entry that could not be decoded
}

// NewRecord is the record of f, as every dead letter is stored: the message's metadata with
// the reason (codec.HeaderDeadLetter) and without the marks of the delivery, its stream
// fields in DefaultMarshaler's format, and the time of its first entry as its timestamp
// (FailedAt when there is none). The error is ErrNoUUID, or codec.Encode's (a reserved
// metadata key).
func NewRecord(f Failure) (Record, error) {
	if f.UUID == "" {
		return Record{}, ErrNoUUID
	}
	md := maps.Clone(f.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	codec.ClearDeliveryMarks(md)
	md[codec.HeaderDeadLetter] = f.Reason
	fields, err := codec.Encode(f.UUID, md, f.Payload)
	if err != nil {
		return Record{}, err
	}
	headers, _ := json.Marshal(md) // a map of strings always encodes
	ts := f.FailedAt
	if f.OriginalID != "" {
		ts = streamid.Time(f.OriginalID)
	}
	return Record{
		OriginalTopic: f.Topic, Partition: f.Partition, OriginalMessageID: f.OriginalID, OriginalStreamID: f.StreamID,
		RetryCount: f.RetryCount, MaxRetries: f.MaxRetries, Timestamp: ts, FailedAt: f.FailedAt,
		Reason: f.Reason, Group: f.Group, Headers: string(headers), Message: fields, Raw: f.Raw,
	}, nil
}

// OriginalID is the id of the first entry of a message delivered as entry id with metadata
// md: its codec.HeaderOriginalID when it is a retry or a replay, else id.
func OriginalID(md map[string]string, id string) string {
	if o := md[codec.HeaderOriginalID]; o != "" {
		return o
	}
	return id
}

// WithMessage is a DLQ entry's fields with its message replaced by the one a DLQ handler left
// (uuid, metadata, payload): the record (group, partition, original id) stays. The entry as it
// was when the metadata cannot be stored.
func WithMessage(values map[string]any, uuid string, md map[string]string, payload []byte) map[string]any {
	fields, err := codec.Encode(uuid, md, payload)
	if err != nil {
		return values
	}
	out := make(map[string]any, len(values)+len(fields))
	maps.Copy(out, values)
	for k, v := range fields {
		if b, ok := v.([]byte); ok {
			v = string(b) // as Redis returns fields
		}
		out[k] = v
	}
	return out
}
