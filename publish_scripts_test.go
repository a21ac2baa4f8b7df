package streamq_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/components/delay"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
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

func TestPublishReloadsScriptsAfterTheCacheIsLost(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	ctx := context.Background()
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	big := func() *message.Message { return message.NewMessage(watermill.NewUUID(), make([]byte, 70_000)) }
	delayed := func() *message.Message {
		m := message.NewMessage(watermill.NewUUID(), []byte("later"))
		m.Metadata.Set("_watermill_delayed_for", "1h")
		return m
	}
	require.NoError(t, pub.Publish("scripts", big(), delayed()))
	// A restart or a failover empties the server's script cache.
	require.NoError(t, client.ScriptFlush(ctx).Err())
	require.NoError(t, pub.Publish("scripts", big(), delayed(), message.NewMessage(watermill.NewUUID(), []byte("plain"))))

	space := keys.New("", "")
	n, err := client.XLen(ctx, space.PartitionStream("scripts", 0)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "two offloaded entries and one plain one, none twice")
	parked, err := client.ZCard(ctx, space.Delay("scripts", 0)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), parked)
}

// TestPublishAfterScriptFlush: a Publisher whose pipelined scripts (offload.lua, park.lua) were
// loaded keeps publishing after the script cache of every node is emptied between two
// publishes.
func TestPublishAfterScriptFlush(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8})
		publishScripted := func() error {
			var msgs []*message.Message
			for p := 0; p < 8; p++ {
				big := message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))
				later := message.NewMessage(watermill.NewUUID(), []byte("later"))
				delay.Message(later, delay.For(time.Hour))
				for _, m := range []*message.Message{big, later} {
					m.Metadata.Set(streamq.ForcePartitionMetadata, strconv.Itoa(p))
					msgs = append(msgs, m)
				}
			}
			return pub.Publish("flushed", msgs...)
		}
		require.NoError(t, publishScripted())
		flushScripts(t, client)
		require.NoError(t, publishScripted(), "publish after SCRIPT FLUSH")
	})
}

// noScriptBetweenLoadAndPipeline is a go-redis hook that empties the script cache of every
// master once, right before the first pipeline holding an EVALSHA is sent: the Publisher
// loaded its scripts, then (a failover to a replica that lacks them, a restart, an operator's
// SCRIPT FLUSH) they are gone when the pipeline arrives.
type noScriptBetweenLoadAndPipeline struct {
	once  sync.Once
	fired atomic.Bool
	flush func()
}

func (h *noScriptBetweenLoadAndPipeline) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *noScriptBetweenLoadAndPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (h *noScriptBetweenLoadAndPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if strings.EqualFold(c.Name(), "evalsha") {
				h.once.Do(func() {
					h.flush()
					h.fired.Store(true)
				})
				break
			}
		}
		return next(ctx, cmds)
	}
}

// TestPublishReloadsScriptsOnNoScript: when the scripts are gone between the Publisher's load
// and its pipeline, the pipelined EVALSHAs of offload.lua and park.lua get NOSCRIPT (nothing
// was written). Publish loads the scripts again and resends those writes instead of failing.
func TestPublishReloadsScriptsOnNoScript(t *testing.T) {
	t.Parallel()
	streamqtest.OnBackends(t, func(t *testing.T, client redis.UniversalClient) {
		hook := &noScriptBetweenLoadAndPipeline{flush: func() { flushScripts(t, client) }}
		client.AddHook(hook)
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
		space := keys.New("", "")
		const topic = "noscript"
		big := message.NewMessage(watermill.NewUUID(), randomPayload(t, bigPayloadSize))
		later := message.NewMessage(watermill.NewUUID(), []byte("later"))
		delay.Message(later, delay.For(time.Hour))
		for _, m := range []*message.Message{big, later} {
			m.Metadata.Set(streamq.ForcePartitionMetadata, "1")
		}
		err := pub.Publish(topic, big, later)
		require.True(t, hook.fired.Load(), "the script cache was never emptied under the pipeline")
		require.NoError(t, err, "Publish after the script cache was emptied under its pipeline")
		assert.Equal(t, int64(1), streamqtest.XLen(t, client, space.PartitionStream(topic, 1)), "the offloaded message was appended once")
		n, err := client.ZCard(context.Background(), space.Delay(topic, 1)).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the delayed message was parked once")
	})
}
