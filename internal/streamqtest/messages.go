package streamqtest

import (
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// KeyedMessages returns n messages over keys k0..k(keys-1), with metadata key and seq (the
// message's number within its key).
func KeyedMessages(from, n, keys int) []*message.Message {
	out := make([]*message.Message, n)
	for i := range out {
		k := (from + i) % keys
		m := message.NewMessage(watermill.NewUUID(), []byte("x"))
		m.Metadata.Set("partition_key", "k"+strconv.Itoa(k))
		m.Metadata.Set("key", "k"+strconv.Itoa(k))
		m.Metadata.Set("seq", strconv.Itoa((from+i)/keys))
		out[i] = m
	}
	return out
}

// PublishNumbered publishes n messages to topic's 4 partitions, numbered by "seq".
func PublishNumbered(t *testing.T, client redis.UniversalClient, topic string, n int) {
	pub := NewPublisher(t, streamq.PublisherConfig{Client: client, DefaultPartitionCount: 4})
	for from := 0; from < n; from += 100 {
		var msgs []*message.Message
		for i := from; i < min(from+100, n); i++ {
			m := message.NewMessage(watermill.NewUUID(), []byte("x"))
			m.Metadata.Set("seq", strconv.Itoa(i))
			msgs = append(msgs, m)
		}
		require.NoError(t, pub.Publish(topic, msgs...))
	}
}

// SeqOf reads the "seq" metadata of a message published by PublishKeyed.
func SeqOf(m *message.Message) int {
	n, _ := strconv.Atoi(m.Metadata.Get("seq"))
	return n
}

// ReceiveOne returns the next message of ch, failing the test after timeout.
func ReceiveOne(t *testing.T, ch <-chan *message.Message, timeout time.Duration) *message.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(timeout):
		t.Fatalf("no message within %s", timeout)
		return nil
	}
}

// AckNext acks the next message of ch (10 s at most) and returns it.
func AckNext(t *testing.T, ch <-chan *message.Message) *message.Message {
	t.Helper()
	m := ReceiveOne(t, ch, 10*time.Second)
	m.Ack()
	return m
}
