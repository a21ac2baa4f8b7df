package dlq

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/payload"
)

// FuzzRebuild: a DLQ entry is stored data, possibly written by hand; rebuilding it for a
// replay either fails with an error or yields a decodable entry for its partition, with the
// payload inline or, over the threshold, stored apart and referred to.
func FuzzRebuild(f *testing.F) {
	f.Add("uuid", "\x81\xa1k\xa1v", "payload", "3", 0)
	f.Add("", "", "", "", 0)
	f.Add("u", "\xc1", "p", "-1", 1)
	f.Add("u", "\x80\xff", "p", "x", -1)
	f.Add("u", "", "a payload over the threshold", "2", 4)
	f.Fuzz(func(t *testing.T, uuid, md, body, partition string, threshold int) {
		values := map[string]any{codec.UUIDField: uuid, codec.MetadataField: md, codec.PayloadField: body, FieldPartitionID: partition}
		off := Offloading{Threshold: threshold, Key: func(ref string) string { return "payload:" + ref }, Index: "index"}
		r, err := Rebuild(values, "1-1", false, off)
		if err != nil {
			return
		}
		back := map[string]any{}
		for i := 0; i+1 < len(r.Fields); i += 2 {
			k, _ := r.Fields[i].(string)
			switch v := r.Fields[i+1].(type) {
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
		if gotMD[codec.HeaderReplayedFrom] != "1-1" {
			t.Fatalf("replay lost its origin: %v", gotMD)
		}
		offloaded := payload.Offloads(threshold, len(body))
		switch {
		case offloaded != (r.Stored != nil):
			t.Fatalf("threshold %d, payload of %d bytes: stored apart %v", threshold, len(body), r.Stored != nil)
		case !offloaded && gotPayload != body:
			t.Fatalf("inline replay lost its payload: %q", gotPayload)
		case offloaded && (gotPayload != "" || string(r.Stored.Payload) != body || payload.Ref(back) != r.Stored.Ref ||
			r.Stored.Key != "payload:"+r.Stored.Ref || back[payload.FieldOriginalSize] != strconv.Itoa(len(body))):
			t.Fatalf("offloaded replay: entry payload %q, stored %+v, fields %v", gotPayload, r.Stored, back)
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
