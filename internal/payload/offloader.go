package payload

import (
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/keys"
)

// Offloader builds a publisher's offloaded appends: a payload over Threshold bytes (<= 0:
// never) goes to a key of its own in its partition's slot (keys in Space), kept at most TTL
// (0: until every group acked its entry, or the entry is gone).
type Offloader struct {
	Space     keys.Space
	Threshold int
	TTL       time.Duration
}

// Offloads reports whether a payload of size bytes is offloaded.
func (o Offloader) Offloads(size int) bool { return Offloads(o.Threshold, size) }

// Offload is the offloaded append of an entry to partition part of topic: body goes to a
// payload key under a new reference, and the entry gets the reference fields followed by
// fields (the message's other fields, marshaled without its payload).
func (o Offloader) Offload(topic string, part int, body []byte, fields map[string]any) *Offload {
	ref := watermill.NewUUID()
	all := RefFields(ref, len(body))
	for k, v := range fields {
		all = append(all, k, v)
	}
	return &Offload{
		Stored: Stored{Key: o.Space.Payload(topic, part, ref), Index: o.Space.PayloadIndex(topic, part),
			Ref: ref, Payload: body, TTL: o.TTL},
		Stream: o.Space.PartitionStream(topic, part),
		Fields: all,
	}
}
