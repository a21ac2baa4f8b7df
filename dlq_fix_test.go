package streamq_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestDLQHandlerReplaysItsFix: a DLQ handler that changes the dead letter's payload and
// metadata before Replay replays the message as it left it; the record's marks do not come
// along.
func TestDLQHandlerReplaysItsFix(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, testDLQHandlerReplaysItsFix)
}

func testDLQHandlerReplaysItsFix(t *testing.T, client redis.UniversalClient) {
	t.Parallel()
	ctx := context.Background()
	const topic = "fix-and-replay"
	workers := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "workers"))
	ch, err := workers.Subscribe(ctx, topic)
	require.NoError(t, err)
	fixers := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "fixers"))
	letters, err := fixers.Subscribe(ctx, streamq.DLQTopic(topic))
	require.NoError(t, err)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sent := message.NewMessage(watermill.NewUUID(), []byte("broken"))
	sent.Metadata.Set("keep", "me")
	require.NoError(t, pub.Publish(topic, sent))

	first := nextMsg(t, ch, 10*time.Second)
	_ = streamq.DeadLetter(first, nil)
	first.Nack()
	letter := nextMsg(t, letters, 10*time.Second)
	letter.Payload = []byte("fixed")
	letter.Metadata.Set("fixed-by", "fixers")
	streamq.Replay(letter)
	streamq.Drop(letter) // also delete it from the DLQ
	letter.Ack()

	again := nextMsg(t, ch, 10*time.Second)
	assert.Equal(t, sent.UUID, again.UUID)
	assert.Equal(t, "fixed", string(again.Payload), "the handler's fix is replayed")
	assert.Equal(t, "fixers", again.Metadata.Get("fixed-by"))
	assert.Equal(t, "me", again.Metadata.Get("keep"))
	for _, k := range []string{streamq.DeadLetterMetadata, streamq.ReplayMetadata, streamq.DropMetadata, streamq.RetryCountMetadata} {
		assert.Empty(t, again.Metadata.Get(k), "%s came along", k)
	}
	again.Ack()
}
