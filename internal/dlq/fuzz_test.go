package dlq

import (
	"testing"

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
		fields, err := ReplayFields(values, "1-1")
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
