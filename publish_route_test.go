package streamq_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/publish"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// routePublisher is a Publisher of cfg (its Client set to client) that creates topics of n
// partitions, closed when the test ends.
func routePublisher(t *testing.T, client redis.UniversalClient, n int, cfg streamq.PublisherConfig) *streamq.Publisher {
	t.Helper()
	cfg.Client, cfg.DefaultPartitionCount = client, n
	cfg.Memory.Interval = -1
	pub, err := streamq.NewPublisher(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}

// routeMsg is a message with metadata md and the payload "payload".
func routeMsg(md message.Metadata) *message.Message {
	msg := message.NewMessage(watermill.NewUUID(), []byte("payload"))
	for k, v := range md {
		msg.Metadata.Set(k, v)
	}
	return msg
}

// publishedTo publishes msgs to topic and returns the partition each went to.
func publishedTo(t *testing.T, pub *streamq.Publisher, topic string, msgs ...*message.Message) []int {
	t.Helper()
	require.NoError(t, pub.Publish(topic, msgs...))
	parts := make([]int, len(msgs))
	for i, m := range msgs {
		p, ok := streamq.PublishedPartition(m)
		require.True(t, ok, "message %d was written", i)
		parts[i] = p
	}
	return parts
}

// TestRouteForcedPartition: x-force-partition-id puts a message on that partition, whatever
// its key.
func TestRouteForcedPartition(t *testing.T) {
	t.Parallel()
	pub := routePublisher(t, redistest.Start(t).Client(t), 8, streamq.PublisherConfig{})
	tests := []struct {
		name  string
		input string // x-force-partition-id
		want  int
	}{
		{name: "3 of 8", input: "3", want: 3},
		{name: "first", input: "0", want: 0},
		{name: "last", input: "7", want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := publishedTo(t, pub, "orders", routeMsg(message.Metadata{
				streamq.ForcePartitionMetadata: tt.input,
				streamq.PartitionKeyMetadata:   "ignored-when-forced",
			}))
			assert.Equal(t, []int{tt.want}, got)
		})
	}
}

// TestRouteForcedPartitionOutOfRange: an x-force-partition-id that is no partition of the
// topic fails the Publish with ErrPartitionOutOfRange, a *PartitionError of the topic and the
// partition; one that is no decimal index at all with ErrInvalidMessage naming the message.
// Neither writes anything.
func TestRouteForcedPartitionOutOfRange(t *testing.T) {
	t.Parallel()
	pub := routePublisher(t, redistest.Start(t).Client(t), 8, streamq.PublisherConfig{})
	for _, input := range []string{"8", "-1"} {
		t.Run(input, func(t *testing.T) {
			msg := routeMsg(message.Metadata{streamq.ForcePartitionMetadata: input})
			err := pub.Publish("orders", msg)
			require.ErrorIs(t, err, streamq.ErrPartitionOutOfRange)
			assert.NotErrorIs(t, err, streamq.ErrInvalidMessage)
			var pe *streamq.PartitionError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "orders", pe.Topic)
			assert.Equal(t, input, strconv.Itoa(pe.Partition))
			_, written := streamq.PublishedPartition(msg)
			assert.False(t, written)
		})
	}
	// No decimal index at all (or none an int holds): a message to fix, not a partition.
	for _, input := range []string{"abc", "3.0", " 3", "99999999999999999999999"} {
		t.Run(input, func(t *testing.T) {
			msg := routeMsg(message.Metadata{streamq.ForcePartitionMetadata: input})
			err := pub.Publish("orders", msg)
			require.ErrorIs(t, err, streamq.ErrInvalidMessage)
			assert.NotErrorIs(t, err, streamq.ErrPartitionOutOfRange)
			assert.Contains(t, err.Error(), "message "+msg.UUID+" (#0): x-force-partition-id="+strconv.Quote(input)+" is not a decimal partition index")
			_, written := streamq.PublishedPartition(msg)
			assert.False(t, written)
		})
	}
}

// TestRoutePartitionerOutOfRange: a Partitioner's answer outside the topic's partitions fails
// the Publish with ErrPartitionOutOfRange, a *PartitionError naming the topic and the
// partition; one inside is where the message goes.
func TestRoutePartitionerOutOfRange(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	tests := []struct {
		name  string
		input int // what the partitioner returns for 8 partitions
		want  error
	}{
		{name: "partition count", input: 8, want: streamq.ErrPartitionOutOfRange},
		{name: "far above", input: 1000, want: streamq.ErrPartitionOutOfRange},
		{name: "negative", input: -1, want: streamq.ErrPartitionOutOfRange},
		{name: "in range", input: 7, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := routePublisher(t, client, 8, streamq.PublisherConfig{
				Partitioning: streamq.PartitioningConfig{Partitioner: streamq.PartitionerFunc(func(string, int) int { return tt.input })},
			})
			if tt.want == nil {
				assert.Equal(t, []int{tt.input}, publishedTo(t, pub, "orders", routeMsg(nil)))
				return
			}
			err := pub.Publish("orders", routeMsg(nil))
			require.ErrorIs(t, err, tt.want)
			var pe *streamq.PartitionError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.input, pe.Partition)
			assert.Equal(t, "orders", pe.Topic)
		})
	}
}

// TestRoutePartitionKey: a message's partition_key picks its partition by the Kafka hash,
// the same every time; different keys spread over every partition; a PartitionKey func
// replaces the metadata key.
func TestRoutePartitionKey(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client(t)
	tests := []struct {
		name  string
		input string // partition_key
		n     int
	}{
		{name: "customer key over 8", input: "customer-42", n: 8},
		{name: "unicode key over 12", input: "клиент-7", n: 12},
		{name: "one partition", input: "k", n: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := routePublisher(t, client, tt.n, streamq.PublisherConfig{})
			msgs := make([]*message.Message, 20)
			for i := range msgs {
				msgs[i] = routeMsg(message.Metadata{streamq.PartitionKeyMetadata: tt.input})
			}
			want := publish.KafkaPartition([]byte(tt.input), tt.n)
			for _, got := range publishedTo(t, pub, fmt.Sprintf("orders-%d", tt.n), msgs...) {
				assert.Equal(t, want, got)
			}
		})
	}

	t.Run("different keys spread", func(t *testing.T) {
		pub := routePublisher(t, client, 8, streamq.PublisherConfig{})
		msgs := make([]*message.Message, 100)
		for i := range msgs {
			msgs[i] = routeMsg(message.Metadata{streamq.PartitionKeyMetadata: "key-" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
		}
		seen := map[int]bool{}
		for _, got := range publishedTo(t, pub, "orders-8", msgs...) {
			seen[got] = true
		}
		assert.Len(t, seen, 8)
	})

	t.Run("custom PartitionKey", func(t *testing.T) {
		custom := routePublisher(t, client, 8, streamq.PublisherConfig{
			Partitioning: streamq.PartitioningConfig{PartitionKey: func(_ string, msg *message.Message) string { return string(msg.Payload) }},
		})
		got := publishedTo(t, custom, "orders-8", routeMsg(message.Metadata{streamq.PartitionKeyMetadata: "not-this"}))
		assert.Equal(t, []int{publish.KafkaPartition([]byte("payload"), 8)}, got)
	})
}
