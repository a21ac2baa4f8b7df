// Package memsize measures how many bytes of Redis memory one stream entry costs, to size
// Redis for a backlog (docs/storage.md, Sizing Redis memory for a backlog). It is built only
// with the memsize build tag, as a test:
//
//	go test -tags memsize -run TestMemSize -v -timeout 20m ./memsize
//	make memsize
//
// For each payload size (16 B, 256 B, 1 KiB and 4 KiB, 100,000 messages each; 100 KiB, offloaded,
// 2,000 messages) it starts a redis-server of its own (no persistence, so no AOF buffer is
// counted), registers a consumer group on an 8-partition topic, and reads INFO used_memory
// before and after appending the messages with a Publisher idempotent by UUID
// in Publish calls of 100 messages, with the publisher's connections closed. It reads it
// again once the idempotency records are gone (their keys deleted: what their expiry after
// one and a half windows does), and repeats the run on fresh servers with the default
// Publisher (idempotent by producer and sequence) and with Idempotency.Window -1 (no
// records). Nothing is consumed: the backlog is the whole stream.
// It prints a table of bytes per entry and where they go (MEMORY USAGE of the streams, the
// idempotency buckets and the payload keys).
package memsize
