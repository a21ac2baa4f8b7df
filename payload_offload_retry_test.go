package streamq_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// resendPipelines is a go-redis hook that sends every pipeline holding a script call (EVAL,
// EVALSHA) twice, as go-redis does when it retries a command whose reply was lost (a
// timeout, a dropped connection) although Redis had run it.
type resendPipelines struct{}

func (resendPipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (resendPipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (resendPipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if name := strings.ToLower(c.Name()); name == "eval" || name == "evalsha" {
				_ = next(ctx, cmds) // the first run, whose reply is "lost"
				break
			}
		}
		return next(ctx, cmds)
	}
}

// TestOffloadedPublishRetriedByTheClient: the offloaded append run twice with the same
// payload reference (a client retry after a lost reply) appends one entry. The soak found two
// entries sharing one payload key: once every group acked the first, the ack script deleted
// the payload, and a group reading the second dead-lettered it as "offloaded payload missing".
func TestOffloadedPublishRetriedByTheClient(t *testing.T) {
	t.Parallel()
	srv, direct := streamqtest.StartRedis(t)
	retrying := srv.Client(t)
	retrying.AddHook(resendPipelines{})
	const topic = "offload-retried"
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: retrying})
	require.NoError(t, pub.Publish(topic, message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))))

	stream := keys.New("", "").PartitionStream(topic, 0)
	assert.Equal(t, int64(1), streamqtest.XLen(t, direct, stream), "one entry for one offloaded message")
	// Both groups are registered before either consumes: a group that joined after the other had
	// acked (and the payload was deleted, no other group being registered) would find it
	// gone, which is retention doing its job, not what this test is about.
	subs := map[string]*streamq.Subscriber{}
	for _, g := range []string{"g1", "g2"} {
		subs[g] = streamqtest.NewSubscriber(t, streamqtest.FastSub(direct, g))
		require.NoError(t, subs[g].SubscribeInitialize(topic))
	}
	var recs []*streamqtest.Recorder
	for _, g := range []string{"g1", "g2"} {
		ch, err := subs[g].Subscribe(context.Background(), topic)
		require.NoError(t, err)
		rec := streamqtest.NewRecorder()
		streamqtest.ConsumeInto(ch, rec)
		recs = append(recs, rec)
	}
	for _, rec := range recs {
		rec.WaitUnique(t, 1, 10*time.Second)
	}
	require.Eventually(t, func() bool {
		return len(scanKeys(t, direct, "streaming:mq:payload:*")) == 0
	}, 10*time.Second, 20*time.Millisecond, "the payload is deleted once both groups acked")
	assert.Zero(t, dlqLen(t, direct, topic, 1), "nothing dead-lettered")
}
