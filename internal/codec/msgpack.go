package codec

import (
	"fmt"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// decoders are reused, since a decoder per entry would be an allocation each, and one that
// failed is dropped: msgpack grows a decoder's buffer towards a string's claimed length before
// it finds the input short, and keeps that buffer, so a pooled decoder that met malformed
// entries would hold a quarter more memory after each.
var decoders = sync.Pool{New: func() any { return msgpack.NewDecoder(nil) }}

// Unmarshal decodes raw, one msgpack value and nothing after it, into v.
func Unmarshal(raw string, v any) error {
	r := strings.NewReader(raw)
	dec := decoders.Get().(*msgpack.Decoder)
	dec.Reset(r)
	if err := dec.Decode(v); err != nil {
		return err // dec is not put back: its buffer may have grown past the input
	}
	dec.Reset(nil)
	decoders.Put(dec)
	if r.Len() > 0 {
		return fmt.Errorf("%d bytes after the value", r.Len())
	}
	return nil
}
