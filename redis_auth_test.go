package streamq_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// A Publisher or Subscriber whose client lacks the server's password, or has a wrong one, gets
// an error that says so and what to set: never the protocol error an unauthenticated pipeline
// meets. (A password given to a server without one is ignored by go-redis.)
func TestAuthErrorsSaySo(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	require.NoError(t, srv.Client(t).ConfigSet(context.Background(), "requirepass", "s3cret").Err())
	t.Cleanup(func() { // the server's own cleanup talks to it without a password
		authed := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret"})
		defer authed.Close()
		_ = authed.ConfigSet(context.Background(), "requirepass", "").Err()
	})
	cases := []struct {
		name string
		opts *redis.Options
		want string
	}{
		{"no password", &redis.Options{Addr: srv.Addr()}, "requires authentication and the client gave none"},
		{"wrong password", &redis.Options{Addr: srv.Addr(), Password: "wrong"}, "refused the client's user name or password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClient(tc.opts)
			t.Cleanup(func() { _ = client.Close() })
			pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = pub.Close() })
			msgs := make([]*message.Message, 20)
			for i := range msgs {
				msgs[i] = message.NewMessage(watermill.NewUUID(), []byte("x"))
			}
			err = pub.Publish("orders", msgs...)
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "multibulk")

			sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, ConsumerGroup: "g"}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			_, err = sub.Subscribe(context.Background(), "orders")
			require.ErrorIs(t, err, streamq.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
