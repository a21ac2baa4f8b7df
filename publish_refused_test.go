package streamq_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// Bad input is refused at the door: Publish returns ErrInvalidMessage naming the message and
// what is wrong, and appends nothing of the call, not even its good messages.
func TestPublishRefusesBadMessages(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 2})
	good := func() *message.Message { return message.NewMessage(watermill.NewUUID(), []byte("ok")) }
	forced := func(p string) *message.Message {
		m := good()
		m.Metadata.Set(streamq.ForcePartitionMetadata, p)
		return m
	}
	bigMetadata := good()
	bigMetadata.Metadata.Set("k", strings.Repeat("x", 1<<20))
	tests := []struct {
		name string
		bad  *message.Message
		want string
	}{
		{"nil message", nil, "message #1: nil"},
		{"empty UUID", message.NewMessage("", []byte("x")), "message #1: empty UUID"},
		{"forced partition with a sign", forced("+1"), ""},
		{"metadata over 1 MiB", bigMetadata, "metadata of 1048577 bytes, more than 1048576"},
		{"payload over 512 MiB", message.NewMessage("big", make([]byte, 512<<20+1)), "payload of 536870913 bytes, more than 536870912"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := pub.Publish("door", good(), tc.bad)
			if tc.want == "" { // "+1" is a decimal index strconv reads: no refusal of the door
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, streamq.ErrInvalidMessage)
			assert.NotErrorIs(t, err, streamq.ErrPartitionOutOfRange)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), `publish to "door"`)
		})
	}
	appended := func() (n int64) {
		for p := range 2 {
			n += streamqtest.XLen(t, client, keys.New("", "").PartitionStream("door", p))
		}
		return n
	}
	assert.Equal(t, int64(2), appended(), "only the call whose forced partition is a decimal index appended (its two messages)")

	err := pub.Publish("door", forced("7"))
	require.ErrorIs(t, err, streamq.ErrPartitionOutOfRange, "a decimal index outside the topic is out of range")
	assert.NotErrorIs(t, err, streamq.ErrInvalidMessage)

	var pe *streamq.PartitionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 7, pe.Partition)

	bad := forced("abc")
	err = pub.Publish("door", good(), bad)
	require.ErrorIs(t, err, streamq.ErrInvalidMessage, "not a decimal index is a message to fix")
	assert.NotErrorIs(t, err, streamq.ErrPartitionOutOfRange, "distinct from an index outside the topic")
	assert.EqualError(t, err, `publish to "door": invalid message: message `+bad.UUID+
		` (#1): x-force-partition-id="abc" is not a decimal partition index`)
	assert.False(t, errors.As(err, &pe), "no partition to name")
	assert.Equal(t, int64(2), appended(), "nothing of a call with a bad forced partition is appended")
}

// A topic name over 249 bytes is refused before anything is written, by Publish and
// Subscribe alike.
func TestLongTopicNamesRefused(t *testing.T) {
	t.Parallel()
	_, client := streamqtest.StartRedis(t)
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	long := strings.Repeat("t", 250)
	err := pub.Publish(long, message.NewMessage(watermill.NewUUID(), nil))
	require.ErrorIs(t, err, streamq.ErrInvalidName)
	assert.Contains(t, err.Error(), "250 bytes long, more than 249")
	_, err = sub.Subscribe(context.Background(), long)
	require.ErrorIs(t, err, streamq.ErrInvalidName)
	require.NoError(t, pub.Publish(long[:249], message.NewMessage(watermill.NewUUID(), nil)), "249 bytes is fine")
	n, err := client.DBSize(context.Background()).Result()
	require.NoError(t, err)
	assert.Positive(t, n)
}

// A Redis that cannot be reached is said so, with its address and without the engine's
// internal steps; the network error stays in the chain.
func TestUnreachableRedisIsSaidSo(t *testing.T) {
	t.Parallel()
	srv, client := streamqtest.StartRedis(t)
	addr := client.Options().Addr
	pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: client})
	sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(client, "g"))
	require.NoError(t, srv.Kill())

	err := pub.Publish("away", message.NewMessage(watermill.NewUUID(), nil))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `publish to "away": cannot reach Redis at `+addr+": "), err.Error())
	assert.NotContains(t, err.Error(), "register topic")
	var opErr interface{ Timeout() bool }
	assert.True(t, errors.As(err, &opErr), "the network error stays in the chain")
	_, err = sub.Subscribe(context.Background(), "away")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `subscribe to "away": cannot reach Redis at `+addr+": "), err.Error())
}
