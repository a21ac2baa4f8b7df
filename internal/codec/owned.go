package codec

import "unsafe"

// OwnedBytes returns s as a byte slice without copying it. Only for strings nothing else
// reads afterwards and that live on the heap: the fields of a go-redis reply, which go-redis
// itself builds from a []byte it allocated for the reply (never a literal, which would be in
// read-only memory). Writes through the slice change the string's bytes.
func OwnedBytes(s string) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
