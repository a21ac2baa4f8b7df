//go:build race

package scenario_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/subscriber"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/streamqtest"
)

// TestPubSubReconnect runs the universal suite (with -race) in the restart configuration;
// Watermill's TestReconnect itself skips here because of its harness race (see
// pubsub_reconnect_test.go), and TestReconnectUnderRace below covers it.
func TestPubSubReconnect(t *testing.T) {
	t.Parallel()
	streamqtest.Universal(t, 4, true, false)
}

// TestReconnectUnderRace is Watermill's TestReconnect with its harness race fixed: 10,000
// messages from 100 publishers, the test's redis-server (AOF on) restarted at 1/3 and 1/2 of
// them; every message whose Publish returned nil must be received.
func TestReconnectUnderRace(t *testing.T) {
	t.Parallel()
	srv, client := streamqtest.StartRedis(t)
	pub, sub := streamqtest.NewPubSub(t, client, 4, false, true, "reconnect", nil)
	defer func() {
		require.NoError(t, pub.Close())
		require.NoError(t, sub.Close())
	}()
	topic := "reconnect-" + watermill.NewShortUUID()
	require.NoError(t, sub.(message.SubscribeInitializer).SubscribeInitialize(topic))
	messages, err := sub.Subscribe(context.Background(), topic)
	require.NoError(t, err)

	const total, publishers = 10000, 100
	var (
		mu        sync.Mutex
		published message.Messages
		restarts  sync.WaitGroup
		senders   sync.WaitGroup
	)
	work := make(chan int)
	go func() {
		for i := 0; i < total; i++ {
			work <- i
			if i == total/3 || i == total/2 {
				restarts.Add(1)
				go func() {
					defer restarts.Done()
					assert.NoError(t, srv.Restart())
				}()
			}
		}
		close(work)
	}()
	for p := 0; p < publishers; p++ {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for range work {
				msg := message.NewMessage(watermill.NewUUID(), []byte("x"))
				for pub.Publish(topic, msg) != nil {
					time.Sleep(100 * time.Millisecond) // Redis is restarting
				}
				mu.Lock()
				published = append(published, msg)
				mu.Unlock()
			}
		}()
	}

	received, all := subscriber.BulkReadWithDeduplication(messages, total, 60*time.Second)
	restarts.Wait()
	// A message can arrive while its Publish is still being retried (its first send was
	// appended, the reply lost in the restart): it counts as published once that returns.
	senders.Wait()
	assert.True(t, all, "received %d of %d", len(received), total)
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, published.IDs(), received.IDs())
}
