package outbox_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// TestPerKeyOrderThroughTheRelay: 20 keys x 50 messages, written in transactions of 10 that
// mix keys, arrive in an 8-partition topic with each key's messages in its one partition,
// in sequence 0..49, each once.
func TestPerKeyOrderThroughTheRelay(t *testing.T) {
	forEachDB(t, func(t *testing.T, d outbox.Dialect) {
		const keys, perKey, perTx, topic = 20, 50, 10, "ordered"
		e := newEnv(t, d)
		e.startRelay(e.fastRelay())
		var batch []*message.Message
		for i := range keys * perKey {
			batch = append(batch, keyed("key-"+strconv.Itoa(i%keys), i/keys))
			if len(batch) == perTx {
				e.publishTx(true, topic, batch...)
				batch = nil
			}
		}
		e.waitMoved(topic, keys*perKey, 60*time.Second)

		next := map[string]int{}
		for _, en := range e.entries(topic) { // partition by partition, in stream order
			key := en.Metadata[streamq.PartitionKeyMetadata]
			seq, err := strconv.Atoi(en.Metadata["seq"])
			require.NoError(t, err)
			require.Equal(t, next[key], seq, "key %s in partition %d: got seq %d after %d", key, en.Partition, seq, next[key]-1)
			require.Equal(t, streamq.HashPartitioner{}.Partition(key, 8), en.Partition)
			next[key]++
		}
		for k := range keys {
			assert.Equal(t, perKey, next[fmt.Sprintf("key-%d", k)], "messages of key-%d", k)
		}
	})
}
