package admin_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/admin"
)

// A tool rejects a message outside any handler: the dead letter is listed, consumed from
// streamq.DLQTopic("orders") and replayed to partition 3 like those a Subscriber writes.
func ExampleAdmin_AddDeadLetter() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	a, err := admin.New(client, admin.Options{})
	if err != nil {
		panic(err)
	}
	d, err := a.AddDeadLetter(ctx, admin.NewDeadLetter{
		Topic: "orders", Partition: 3,
		Payload:  []byte(`{"order":17}`),
		Metadata: map[string]string{"customer": "c-7"},
		Reason:   "rejected by the reconciler", // required
		Group:    "payments",                   // optional: the group that rejected it
		// optional: the message's stream id in the partition, when the tool read it from there
		OriginalMessageID: "1700000000000-0",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("dead letter", d.ID, "of partition", d.Partition)
	newID, err := a.ReplayDeadLetter(ctx, "orders", d.Partition, d.ID, admin.ReplayOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("replayed as", newID)
}
