package outbox_test

import (
	"context"
	"database/sql"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/outbox"
)

// A business row and its event in one transaction: the event reaches the "orders" topic if
// and only if the transaction commits.
func ExampleNewPublisher() {
	ctx := context.Background()
	db, _ := sql.Open("mysql", "app@tcp(127.0.0.1:3306)/app")
	tx, _ := db.BeginTx(ctx, nil)
	defer func() { _ = tx.Rollback() }() // a no-op after Commit

	_, _ = tx.ExecContext(ctx, "INSERT INTO orders (id, customer) VALUES (?, ?)", "o-17", "customer-42")
	pub, _ := outbox.NewPublisher(tx, outbox.Config{Dialect: outbox.MySQL})
	msg := message.NewMessage(watermill.NewUUID(), []byte(`{"order":"o-17"}`))
	msg.Metadata.Set(streamq.PartitionKeyMetadata, "customer-42")
	msg.SetContext(ctx)
	_ = pub.Publish("orders", msg)
	_ = tx.Commit()
}

// The relay of the default outbox table, until ctx is done.
func ExampleNewRelay() {
	ctx := context.Background()
	db, _ := sql.Open("pgx", "postgres://app@127.0.0.1:5432/app")
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	relay, err := outbox.NewRelay(outbox.RelayConfig{
		DB:                db,
		Dialect:           outbox.PostgreSQL,
		Redis:             rdb,
		IdempotencyWindow: 6 * time.Hour, // covers the longest relay outage expected
		Publisher:         streamq.PublisherConfig{DefaultPartitionCount: 16},
	})
	if err != nil {
		panic(err)
	}
	defer func() { _ = relay.Close() }()
	_ = relay.Run(ctx)
}
