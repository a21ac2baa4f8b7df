package dlq

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
)

// FuzzReplayFields: a DLQ entry is stored data, possibly written by hand; rebuilding it for a
// replay either fails with an error or yields a decodable entry for its partition.
func FuzzReplayFields(f *testing.F) {
	f.Add("uuid", "\x81\xa1k\xa1v", "payload", "3")
	f.Add("", "", "", "")
	f.Add("u", "\xc1", "p", "-1")
	f.Add("u", "\x80\xff", "p", "x")
	f.Fuzz(func(t *testing.T, uuid, md, payload, partition string) {
		values := map[string]any{codec.UUIDField: uuid, codec.MetadataField: md, codec.PayloadField: payload, FieldPartitionID: partition}
		fields, err := ReplayFields(values, "1-1", false)
		if err != nil {
			return
		}
		back := map[string]any{}
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := fields[i].(string)
			switch v := fields[i+1].(type) {
			case []byte:
				back[k] = string(v)
			case string:
				back[k] = v
			}
		}
		_, gotMD, gotPayload, err := codec.Decode(back)
		if err != nil {
			t.Fatalf("replayed entry does not decode: %v", err)
		}
		if gotPayload != payload || gotMD[codec.HeaderReplayedFrom] != "1-1" {
			t.Fatalf("replay lost data: %q %v", gotPayload, gotMD)
		}
	})
}

// FuzzDecode: a DLQ entry is stored data, possibly written by hand. Decoding never panics on
// any fields, and reads back what Record.Fields wrote: the record (a time that is not
// positive reads as zero) and its message.
func FuzzDecode(f *testing.F) {
	f.Add("orders", uint16(3), "1-0", "2-0", 4, 5, int64(1_700_000_000_000), int64(1_700_000_000_500), "max retries", "g", "{}", "", "u1", "k", "v", "body")
	f.Add("", uint16(0), "", "", 0, 0, int64(0), int64(-1), "", "", "", `{"x":"y"}`, "", "", "", "")
	f.Add("t", uint16(65535), "x", "y", -1, -7, int64(-5), int64(1), "r", "g", "h", "raw", "u", "", "", "")
	f.Fuzz(func(t *testing.T, topic string, partition uint16, origID, streamID string, retries, maxRetries int,
		ts, failed int64, reason, group, headers, raw, uuid, mdKey, mdVal, payload string) {
		garbled := map[string]any{FieldPartitionID: topic, FieldRetryCount: origID, FieldTimestamp: streamID, FieldFailedAt: reason,
			codec.UUIDField: uuid, codec.MetadataField: mdVal, codec.PayloadField: payload, mdKey: raw}
		_ = Decode(garbled)

		msg, err := codec.Encode(uuid, map[string]string{mdKey: mdVal}, []byte(payload))
		if err != nil {
			msg = nil
		}
		r := Record{
			OriginalTopic: topic, Partition: int(partition), OriginalMessageID: origID, OriginalStreamID: streamID,
			RetryCount: retries, MaxRetries: maxRetries, Timestamp: time.UnixMilli(ts), FailedAt: time.UnixMilli(failed),
			Reason: reason, Group: group, Headers: headers, Raw: raw, Message: msg,
		}
		got := Decode(stored(r.Fields()))
		want := r
		want.Timestamp, want.FailedAt = positive(ts), positive(failed)
		got.Message, want.Message = nil, nil
		if !reflect.DeepEqual(got.Record, want) {
			t.Fatalf("Decode(Fields()) = %+v\nwant %+v", got.Record, want)
		}
		if msg != nil && uuid != "" && (got.UUID != uuid || got.Payload == nil || string(got.Payload) != payload || got.Metadata[mdKey] != mdVal) {
			t.Fatalf("message lost: %q %q %v", got.UUID, got.Payload, got.Metadata)
		}
	})
}

func positive(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
