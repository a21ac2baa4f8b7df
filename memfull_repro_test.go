package streamq

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

func TestReproFull(t *testing.T) {
	srv := redistest.StartWith(t, "maxmemory 12mb", "maxmemory-policy noeviction")
	client := srv.Client(t)
	ctx := context.Background()
	pub := newTestPublisher(t, PublisherConfig{Client: client, DefaultPartitionCount: 4})
	cfg := fastSub(client, "g")
	sub0 := newTestSubscriber(t, cfg)
	require.NoError(t, sub0.SubscribeInitialize("t"))
	payload := []byte(strings.Repeat("x", 1024))
	sent := 0
	var perr error
	for {
		batch := make([]*message.Message, 50)
		for i := range batch {
			batch[i] = message.NewMessage(watermill.NewUUID(), payload)
		}
		if perr = pub.Publish("t", batch...); perr != nil {
			break
		}
		sent += 50
	}
	t.Logf("sent %d, err %v", sent, perr)
	info, _ := client.Info(ctx, "memory").Result()
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "used_memory:") || strings.HasPrefix(l, "maxmemory:") {
			t.Log(l)
		}
	}
	sub := newTestSubscriber(t, cfg)
	msgs, err := sub.Subscribe(ctx, "t")
	t.Logf("subscribe err %v", err)
	var got atomic.Int64
	deadline := time.After(20 * time.Second)
loop:
	for got.Load() < int64(sent) {
		select {
		case m := <-msgs:
			m.Ack()
			got.Add(1)
		case <-deadline:
			break loop
		}
	}
	t.Logf("received %d of %d", got.Load(), sent)
	err = pub.Publish("t", message.NewMessage(watermill.NewUUID(), payload))
	t.Logf("publish after: %v", err)
	fmt.Println()
}
