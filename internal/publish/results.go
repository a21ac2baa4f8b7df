package publish

import (
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/codec"
)

// recordResults sets the results on each message Redis took (codec.HeaderPublishedPartition
// and HeaderPublishedStreamID): its partition, and the id of its entry (none for a delayed
// message, or an offload whose reply named no entry). They are never stored in an entry: the
// default format leaves them out, and the API removes a previous Publish's before.
func recordResults(msgs []*message.Message, writes []Write, results []Result) {
	for i, r := range results {
		if r.Err() != nil {
			continue
		}
		m := msgs[i]
		if m.Metadata == nil {
			m.Metadata = message.Metadata{}
		}
		m.Metadata.Set(codec.HeaderPublishedPartition, strconv.Itoa(writes[i].Partition))
		if id := r.StreamID(); id != "" {
			m.Metadata.Set(codec.HeaderPublishedStreamID, id)
		}
	}
}
