package dlq

import (
	"strconv"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Letter is a DLQ entry read back: the Record it was written from and its message decoded.
type Letter struct {
	Record
	// UUID, Metadata and Payload are the message's (Record.Message in the default format);
	// zero when it does not decode, as for a poison entry (see Raw).
	UUID     string
	Metadata map[string]string
	Payload  []byte
}

// recordFields are the fields Record.Fields writes besides the message's.
var recordFields = map[string]bool{
	FieldOriginalTopic: true, FieldPartitionID: true, FieldOriginalMessageID: true,
	FieldOriginalStreamID: true, FieldRetryCount: true, FieldMaxRetries: true, FieldTimestamp: true,
	FieldFailedAt: true, FieldReason: true, FieldGroup: true, FieldHeaders: true, FieldRaw: true,
}

// Decode reads back a DLQ entry's fields (as Redis returns them: strings) written from a
// Record (Record.Fields). It never fails: a missing field reads as empty, a bad count as 0, a
// bad or non-positive time as the zero time, a bad partition as PartitionOf reads it; every
// field that is not one of the Record's goes to Message.
func Decode(values map[string]any) Letter {
	l := Letter{Record: DecodeRecord(values)}
	l.Message = map[string]any{}
	for k, v := range values {
		if !recordFields[k] {
			l.Message[k] = v
		}
	}
	if uuid, md, payload, err := codec.Decode(values); err == nil {
		l.UUID, l.Metadata, l.Payload = uuid, md, []byte(payload)
	}
	return l
}

// DecodeRecord reads the Record fields of a DLQ entry as Decode does, without its message
// (Message is nil): what a delivery of the entry on a DLQ topic needs, read cheaply.
func DecodeRecord(values map[string]any) Record {
	str := func(k string) string { s, _ := values[k].(string); return s }
	num := func(k string) int { v, _ := strconv.Atoi(str(k)); return v }
	return Record{
		OriginalTopic: str(FieldOriginalTopic), Partition: PartitionOf(values),
		OriginalMessageID: str(FieldOriginalMessageID), OriginalStreamID: str(FieldOriginalStreamID),
		RetryCount: num(FieldRetryCount), MaxRetries: num(FieldMaxRetries),
		Timestamp: millis(str(FieldTimestamp)), FailedAt: millis(str(FieldFailedAt)),
		Reason: str(FieldReason), Group: str(FieldGroup), Headers: str(FieldHeaders), Raw: str(FieldRaw),
	}
}

// millis reads a time stored as unix milliseconds; anything but a positive integer is zero.
func millis(s string) time.Time {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}
