// Package outbox is a transactional outbox for streamq: a service writes its business rows
// and its events in one SQL transaction, and a Relay moves the events into streamq topics,
// so an event is in the stream if and only if its transaction committed.
//
//	tx, _ := db.BeginTx(ctx, nil)
//	_, _ = tx.ExecContext(ctx, "INSERT INTO orders (id, total) VALUES (?, ?)", id, total)
//	pub, _ := outbox.NewPublisher(tx, outbox.Config{Dialect: outbox.MySQL})
//	msg := message.NewMessage(watermill.NewUUID(), payload)
//	msg.Metadata.Set(streamq.PartitionKeyMetadata, customerID)
//	_ = pub.Publish("orders", msg) // a row in the outbox table, in tx
//	_ = tx.Commit()                // now, and only now, the relay will see it
//
// The Relay (or the streamq-outbox binary's relay command) reads the table and publishes
// each message into its topic through a streamq Publisher, keeping its UUID, payload and
// metadata, in the table's order. Rows are read at least once; the relay's streamq
// Publisher drops a UUID it appended within RelayConfig.IdempotencyWindow (default an hour), so
// a row moved again after a relay crash is not appended again: each message is in the
// stream once, provided the relay is back within the window. Consumers' handlers still run
// at least once: acking is theirs.
//
// It is built from Watermill's parts: watermill-sql's Publisher (rows written through the
// caller's transaction), Subscriber (offsets per consumer group, rows locked so several
// relays move each row once) and MySQL and PostgreSQL schemas, and the forwarder component
// of watermill (the envelope that carries the destination topic, and the Forwarder that
// unwraps and publishes). See NOTES.md and README.md beside this file.
//
// The tables are created by a migration (MigrationSQL, Migrate, or streamq-outbox
// migrate), never on first use: the Publisher writes inside the service's transaction,
// where a CREATE TABLE would commit it (MySQL).
//
// The relay measures its lag (rows waiting, age of the oldest) into Prometheus metrics
// (streamq_outbox_pending_rows, streamq_outbox_oldest_age_seconds, streamq_outbox_moved_total,
// streamq_outbox_publish_seconds, streamq_outbox_duplicates_dropped_total) and reports it into
// Redis, where `streamq outbox status`
// reads it.
package outbox
