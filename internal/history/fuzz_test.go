package history

import (
	"testing"
	"time"
)

// FuzzDecode: any entry decodes to a sample or ErrMalformed, never a panic, and what
// encode writes decodes back.
func FuzzDecode(f *testing.F) {
	s := Sample{Time: time.UnixMilli(1_700_000_000_000), EntriesAdded: 9, Length: 4, Retries: 2, DLQLength: 1,
		Groups: map[string]Group{"g": {EntriesRead: 5, Lag: 4, Pending: 1, TimeLag: time.Second, Members: 2}}}
	e := s.encode()
	f.Add(e[1], e[3], e[5], e[7], e[9], e[11])
	f.Add("", "x", "-1", "0", "1", "null")
	f.Add("1", "1", "1", "1", "1", `{"g":{"r":"x"}}`)
	f.Fuzz(func(t *testing.T, tm, added, length, retries, dlq, groups string) {
		values := map[string]any{fieldTime: tm, fieldAdded: added, fieldLength: length, fieldRetry: retries, fieldDLQ: dlq, fieldGroups: groups}
		got, err := Decode(values)
		if err != nil {
			return
		}
		again, err := Decode(pairs(got.encode()))
		if err != nil {
			t.Fatalf("a decoded sample does not decode after encoding: %v", err)
		}
		if again.EntriesAdded != got.EntriesAdded || len(again.Groups) != len(got.Groups) {
			t.Fatalf("round trip changed the sample: %+v -> %+v", got, again)
		}
	})
}

func pairs(kv []string) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
