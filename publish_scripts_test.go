package streamq_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestPublishKeepsOrderAfterScriptCacheLoss: a Publish call with an offloaded payload among
// plain messages of one key appends them in the order given, also when the server lost its
// script cache since the Publisher last used the offload script (a restart, a failover). The
// soak found the offloaded message appended after the others: its EVALSHA was refused with
// NOSCRIPT and sent again once the plain appends had succeeded.
func TestPublishKeepsOrderAfterScriptCacheLoss(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 1})
	const topic = "script-order"
	publish := func(from int) {
		t.Helper()
		msgs := make([]*message.Message, 3)
		for i := range msgs {
			payload := []byte("small")
			if i == 0 {
				payload = randomPayload(t, bigPayloadSize)
			}
			msgs[i] = message.NewMessage(watermill.NewUUID(), payload)
			msgs[i].Metadata.Set(streamq.PartitionKeyMetadata, "k")
			msgs[i].Metadata.Set("seq", strconv.Itoa(from+i))
		}
		require.NoError(t, pub.Publish(topic, msgs...))
	}
	publish(0)
	flushScripts(t, client)
	publish(3)

	entries, err := client.XRange(context.Background(), keys.New("", "").PartitionStream(topic, 0), "-", "+").Result()
	require.NoError(t, err)
	var seqs []int
	for _, e := range entries {
		m, err := streamq.DefaultMarshaler{}.Unmarshal(e.Values)
		require.NoError(t, err)
		seqs = append(seqs, streamqtest.SeqOf(m))
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, seqs, "the stream holds the messages in the order they were published")
}
