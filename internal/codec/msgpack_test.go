package codec

import (
	"errors"
	"runtime"
	"testing"
)

// TestBadMetadataLeavesNoMemoryBehind: metadata whose string claims more bytes than the entry
// holds is malformed, every time, and decoding it holds no memory afterwards. msgpack grows a
// decoder's buffer towards the claimed length before it finds the input short, and keeps the
// buffer; a pooled decoder that met such entries grew by a quarter each time (1 MB to
// hundreds of MB in 20 entries), so a few malformed entries could exhaust a consumer.
func TestBadMetadataLeavesNoMemoryBehind(t *testing.T) {
	bad := map[string]any{UUIDField: "u", PayloadField: "p", MetadataField: "\x81\xdb\xf0\x00\x00\x00k"}
	good := map[string]any{UUIDField: "u", PayloadField: "p", MetadataField: "\x81\xa1k\xa1v"}
	before := heapInUse()
	for range 24 {
		if _, _, _, err := Decode(bad); !errors.Is(err, ErrMalformed) {
			t.Fatalf("bad metadata: got %v, want ErrMalformed", err)
		}
		if _, md, _, err := Decode(good); err != nil || md["k"] != "v" {
			t.Fatalf("good metadata after a bad one: %v, %v", md, err)
		}
	}
	if after := heapInUse(); after > before+32<<20 {
		t.Fatalf("24 malformed entries left %d MB in use", (after-before)>>20)
	}
}

// TestUnmarshalRefusesTrailingBytes: one value and nothing after it.
func TestUnmarshalRefusesTrailingBytes(t *testing.T) {
	var s string
	if err := Unmarshal("\xa1kx", &s); err == nil {
		t.Fatalf("trailing byte accepted: %q", s)
	}
	if err := Unmarshal("\xa1k", &s); err != nil || s != "k" {
		t.Fatalf("got %q, %v", s, err)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
