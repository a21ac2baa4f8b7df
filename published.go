package streamq

import (
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// Metadata keys Publish sets on each message it wrote, for its caller: where the message went
// (the id a send returns). Read them with PublishedPartition and PublishedStreamID.
// They are never stored in an entry: Publish removes both from every message it is given
// before writing it, and sets them once Redis confirmed the write, so a message published
// again (or a copy of one) never carries a previous Publish's values into the stream; the
// entry format (DefaultMarshaler, dead letters) leaves them out, and a Subscriber removes them
// from a delivered message it retries or dead-letters (a handler may have published it).
const (
	// PublishedPartitionMetadata is the partition (decimal index) the message was written to.
	PublishedPartitionMetadata = codec.HeaderPublishedPartition
	// PublishedStreamIDMetadata is the stream id of the entry the message became in its
	// partition. A delayed message (parked until it is due) has none yet: it gets its entry,
	// and its id, when it is moved to the partition.
	PublishedStreamIDMetadata = codec.HeaderPublishedStreamID
)

// PublishedPartition returns the partition Publish wrote msg to; false when msg was not
// written by the last Publish it was given (it failed before Redis took msg, or msg was never
// published by a streamq Publisher).
func PublishedPartition(msg *message.Message) (int, bool) {
	p, err := strconv.Atoi(msg.Metadata.Get(PublishedPartitionMetadata))
	if err != nil || p < 0 {
		return 0, false
	}
	return p, true
}

// PublishedStreamID returns the stream id of the entry Publish appended msg as, in the
// partition PublishedPartition returns (what XRANGE of that partition lists); false when
// there is none: msg was not written, or it was delayed (parked until due, it has no entry
// yet; PublishedPartition still says where it will go).
func PublishedStreamID(msg *message.Message) (string, bool) {
	id := msg.Metadata.Get(PublishedStreamIDMetadata)
	return id, id != ""
}

// clearPublished removes a previous Publish's results from msgs, before they are marshaled
// (Publish), or before a delivered message is retried (the handler may have published it).
func clearPublished(msgs []*message.Message) {
	for _, m := range msgs {
		if m == nil || m.Metadata == nil {
			continue
		}
		delete(m.Metadata, PublishedPartitionMetadata)
		delete(m.Metadata, PublishedStreamIDMetadata)
	}
}
