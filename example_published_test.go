package streamq_test

import (
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
)

// After Publish returned, each message says where it went: its partition and the stream id
// of its entry, as XRANGE of that partition lists it.
func ExamplePublishedStreamID() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, DefaultPartitionCount: 8}, nil)
	if err != nil {
		panic(err)
	}
	defer pub.Close()

	msgs := []*message.Message{
		message.NewMessage(watermill.NewUUID(), []byte(`{"order":17}`)),
		message.NewMessage(watermill.NewUUID(), []byte(`{"order":18}`)),
	}
	msgs[0].Metadata.Set(streamq.PartitionKeyMetadata, "customer-42")
	msgs[1].Metadata.Set(streamq.ForcePartitionMetadata, "5")
	if err := pub.Publish("orders", msgs...); err != nil {
		panic(err)
	}
	for _, m := range msgs {
		partition, _ := streamq.PublishedPartition(m)
		id, _ := streamq.PublishedStreamID(m)
		entries, err := client.XRange(m.Context(), fmt.Sprintf("stream:topic:{orders:p:%d}", partition), id, id).Result()
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s on partition %d: listed %v\n", m.Payload, partition, entries[0].Values[streamq.UUIDField] == m.UUID)
	}
	// Output:
	// {"order":17} on partition 1: listed true
	// {"order":18} on partition 5: listed true
}
