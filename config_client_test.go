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

// A nil pointer inside the Client interface passes a nil check and panicked at the first
// command: it is an ErrInvalidConfig from both constructors, with or without MinReplicas.
func TestTypedNilClientIsInvalidConfig(t *testing.T) {
	t.Parallel()
	var single *redis.Client
	var cluster *redis.ClusterClient
	var ring *redis.Ring
	tests := []struct {
		name   string
		client redis.UniversalClient
		want   string
	}{
		{name: "nil *redis.Client", client: single, want: "nil *redis.Client"},
		{name: "nil *redis.ClusterClient", client: cluster, want: "nil *redis.ClusterClient"},
		{name: "nil *redis.Ring", client: ring, want: "nil *redis.Ring"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, replicas := range []int{0, 1} {
				_, err := streamq.NewPublisher(streamq.PublisherConfig{Client: tt.client, Replication: streamq.ReplicationConfig{MinReplicas: replicas}}, nil)
				require.ErrorIs(t, err, streamq.ErrInvalidConfig)
				assert.Contains(t, err.Error(), tt.want)
			}
			_, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: tt.client}, nil)
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A client closed before its first use gives Publish, Subscribe and SubscribeInitialize an
// error wrapping ErrInvalidConfig and redis.ErrClosed, never a panic; so does one closed
// under a Publisher that has used it.
func TestClosedClientIsInvalidConfig(t *testing.T) {
	t.Parallel()
	srv, _ := streamqtest.StartRedis(t)
	msg := func() *message.Message { return message.NewMessage(watermill.NewUUID(), []byte("x")) }

	t.Run("closed before first use", func(t *testing.T) {
		c := srv.Client(t)
		require.NoError(t, c.Close())
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: c}) // no I/O: no error yet
		err := pub.Publish("closed", msg())
		require.ErrorIs(t, err, streamq.ErrInvalidConfig)
		require.ErrorIs(t, err, redis.ErrClosed)
		assert.Contains(t, err.Error(), `publish to "closed": the Redis client was closed by the caller`)
		assert.NotContains(t, err.Error(), "check the Redis server")

		sub := streamqtest.NewSubscriber(t, streamq.SubscriberConfig{Client: c, ConsumerGroup: "g"})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = sub.Subscribe(ctx, "closed")
		require.ErrorIs(t, err, streamq.ErrInvalidConfig)
		require.ErrorIs(t, err, redis.ErrClosed)
		err = sub.SubscribeInitialize("closed")
		require.ErrorIs(t, err, streamq.ErrInvalidConfig)
		require.ErrorIs(t, err, redis.ErrClosed)
	})

	t.Run("closed after use", func(t *testing.T) {
		c := srv.Client(t)
		pub := streamqtest.NewPublisher(t, streamq.PublisherConfig{Client: c})
		require.NoError(t, pub.Publish("used", msg()))
		require.NoError(t, c.Close())
		err := pub.Publish("used", msg())
		require.ErrorIs(t, err, streamq.ErrInvalidConfig)
		require.ErrorIs(t, err, redis.ErrClosed)
	})

	t.Run("closed under a running subscription", func(t *testing.T) {
		c := srv.Client(t)
		sub := streamqtest.NewSubscriber(t, streamqtest.FastSub(c, "g"))
		ch, err := sub.Subscribe(context.Background(), "running")
		require.NoError(t, err)
		require.NoError(t, c.Close())
		select {
		case _, open := <-ch:
			require.False(t, open, "nothing to deliver")
		case <-time.After(10 * time.Second):
			t.Fatal("the subscription went on with a closed client")
		}
	})
}
