package dlq

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/codec"
)

// stored is what Redis returns for fields written as field, value pairs: strings.
func stored(fields []any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		switch v := fields[i+1].(type) {
		case []byte:
			out[k] = string(v)
		case string:
			out[k] = v
		}
	}
	return out
}

func TestDecode(t *testing.T) {
	msg, err := codec.Encode("u1", map[string]string{"k": "v"}, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	full := Record{
		OriginalTopic: "orders", Partition: 3, OriginalMessageID: "1-0", OriginalStreamID: "2-0",
		RetryCount: 4, MaxRetries: 5, Timestamp: time.UnixMilli(1_700_000_000_000), FailedAt: time.UnixMilli(1_700_000_000_500),
		Reason: "max retries", Group: "g", Headers: `{"k":"v"}`, Message: msg,
	}
	tests := []struct {
		name   string
		values map[string]any
		want   Letter
	}{
		{
			name:   "written by Add",
			values: stored(full.Fields()),
			want: Letter{
				Record: withMessage(full, stored(full.Fields()[len(full.Fields())-6:])),
				UUID:   "u1", Metadata: map[string]string{"k": "v"}, Payload: []byte("body"),
			},
		},
		{
			name:   "poison entry: raw fields, no message",
			values: map[string]any{FieldReason: "poison", FieldRaw: `{"x":"y"}`, FieldPartitionID: "1", "x": "y"},
			want:   Letter{Record: Record{Reason: "poison", Raw: `{"x":"y"}`, Partition: 1, Message: map[string]any{"x": "y"}}},
		},
		{
			name: "bad numbers and times",
			values: map[string]any{
				FieldRetryCount: "many", FieldMaxRetries: "-2", FieldTimestamp: "0", FieldFailedAt: "yesterday", FieldPartitionID: "-1",
			},
			want: Letter{Record: Record{MaxRetries: -2, Message: map[string]any{}}},
		},
		{name: "nothing", values: map[string]any{}, want: Letter{Record: Record{Message: map[string]any{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decode(tt.values); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Decode = %+v\nwant     %+v", got, tt.want)
			}
			wantRecord := tt.want.Record
			wantRecord.Message = nil
			if got := DecodeRecord(tt.values); !reflect.DeepEqual(got, wantRecord) {
				t.Fatalf("DecodeRecord = %+v\nwant           %+v", got, wantRecord)
			}
		})
	}
}

func withMessage(r Record, msg map[string]any) Record {
	r.Message = msg
	return r
}
