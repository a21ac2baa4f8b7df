package streamq

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// DeriveUUIDs is a Router middleware for effectively-once consume-to-produce: each message
// the handler returns gets a UUID derived from the message it consumed (see DeriveUUID). A
// consumed message delivered again (its handler's process killed between publishing and
// acking, a lost lease, a retry) produces the same UUIDs, and a streamq Publisher drops
// what it appended within its Idempotency.Window, whatever its Idempotency mode:
//
//	router.AddMiddleware(streamq.DeriveUUIDs)
//
// docs/pipelines.md says what it needs (the window against the redelivery delay, outputs
// that go to one partition each time) and what it cannot do (a handler whose outputs differ
// between two runs: the first run's win).
func DeriveUUIDs(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		for i, m := range out {
			if m == msg { // the consumed message passed on: its copy is the output
				m = msg.Copy()
				out[i] = m
			}
			DeriveUUID(m, msg, i)
		}
		return out, err
	}
}

// DeriveUUID gives out, the index-th output of a handler that consumed in, a UUID derived
// from in's UUID, the consumer group and the handler's name it was delivered to, and index,
// and marks it (x-derived-from: "<in's UUID>#<index>") so a streamq Publisher drops it by
// UUID when it is published again. For handlers that publish themselves; DeriveUUIDs does
// it for a Router's outputs.
func DeriveUUID(out, in *message.Message, index int) {
	group, _ := ConsumerGroupFromCtx(in.Context())
	h := sha256.New()
	for _, part := range []string{group, message.HandlerNameFromCtx(in.Context()), in.UUID, strconv.Itoa(index)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	out.UUID = uuidOf(h.Sum(nil))
	out.Metadata.Set(codec.HeaderDerivedFrom, in.UUID+"#"+strconv.Itoa(index))
}

// uuidOf formats the first 16 bytes of sum as a name-based UUID (RFC 9562 version 8).
func uuidOf(sum []byte) string {
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}
