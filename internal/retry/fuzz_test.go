package retry

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzDecodeItem: retry and delay items are stored data; any blob decodes or fails cleanly,
// and a decoded item round-trips.
func FuzzDecodeItem(f *testing.F) {
	good, _ := Item{Topic: "t", PartitionID: "1", RetryCount: "2", Fields: []string{"payload", "x"}}.Encode()
	f.Add(good)
	f.Add("")
	f.Add("\xc1")
	raw, _ := msgpack.Marshal(map[string]any{"topic": 7, "partitionId": 1.5, "fields": map[string]int{"a": 1}})
	f.Add(string(raw))
	f.Fuzz(func(t *testing.T, blob string) {
		it, err := DecodeItem(blob)
		if err != nil {
			return
		}
		_ = it.Partition()
		_ = it.Values()
		again, err := it.Encode()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := DecodeItem(again)
		if err != nil || back.Topic != it.Topic || len(back.Fields) != len(it.Fields) {
			t.Fatalf("round trip: %+v vs %+v (%v)", it, back, err)
		}
	})
}
