// Package streamq is a Watermill Pub/Sub on Redis Streams with Kafka-style partitioned
// topics: ordered partitions with one owner each in a consumer group, retries that back off,
// and a dead-letter queue that can be inspected and replayed.
//
// [Publisher] implements Watermill's message.Publisher and [Subscriber] its
// message.Subscriber, so a Watermill Router, its handlers and its middleware work unchanged.
// With client any go-redis client (redis.NewClient, NewClusterClient, NewFailoverClient):
//
//	pub, err := streamq.NewPublisher(streamq.PublisherConfig{
//		Client: client, DefaultPartitionCount: 8, // the topic's count, whichever side creates it
//	}, logger)
//	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
//		Client: client, ConsumerGroup: "payments", DefaultPartitionCount: 8,
//	}, logger)
//	router, err := message.NewRouter(message.RouterConfig{}, logger)
//	router.AddMiddleware(streamq.FailureMiddleware(nil)) // a handler's error becomes its retry's and dead letter's reason
//	router.AddConsumerHandler("payments", "orders", sub, func(msg *message.Message) error {
//		partition, _ := streamq.PartitionFromCtx(msg.Context())
//		log.Printf("order %s on partition %d", msg.Payload, partition)
//		return nil // ack; an error nacks: retried with backoff, then dead-lettered
//	})
//	go router.Run(ctx)
//	<-router.Running()
//
//	msg := message.NewMessage(watermill.NewUUID(), []byte(`{"order":17}`))
//	msg.Metadata.Set(streamq.PartitionKeyMetadata, "customer-42") // one key: one partition, in order
//	err = pub.Publish("orders", msg)
//
// ExampleNewSubscriber_router runs this on an embedded Redis; examples/quickstart in the
// repository is the same as a program. Without [FailureMiddleware] a dead letter's reason is
// only "nacked", and the Subscriber logs once how to get the handler's error into it.
//
// # Concepts
//
// A topic ("orders") is P Redis streams, its partitions. A message's partition key, the
// metadata [PartitionKeyMetadata] ("partition_key"), picks its partition with the murmur2
// hash Kafka's default partitioner uses, so the messages of one key land on one partition,
// in order. A message without a key is routed by its UUID.
//
// A [Subscriber] is a member of a consumer group ([SubscriberConfig].ConsumerGroup). Every
// group receives every message; inside a group, each partition is leased to exactly one live
// member at a time. Members heartbeat and agree on a fair and sticky assignment: max − min ≤ 1
// partitions per member, and a join moves only the partitions the newcomer needs. An owned
// partition is delivered in stream order, one message at a time until it is acked.
//
// A handler that returns nil acks. One that returns an error nacks: the message is retried
// for the failing group only, after a backoff ([RetryConfig].Policy, 1 s, 2 s, 4 s … by
// default), and after its last retry ([RetryConfig].MaxRetries, 3 by default, so 4 handler
// calls; a message's x-max-retries metadata overrides it) it becomes a dead letter in its partition's dead-letter queue. [DeadLetter] sends
// it there at once. The dead letters of a topic are a topic of their own, [DLQTopic]("orders"),
// consumed like any topic: [DeadLetterFromCtx] says why a letter failed, [Replay] appends it
// back to its partition, [Drop] deletes it.
//
// # The partition count
//
// A topic's partition count is fixed by whoever states one first: admin.CreateTopic (or
// "streamq create-topic"), or a Publisher or Subscriber whose DefaultPartitionCount is set
// and that finds the topic missing. A Subscriber that states none never creates a topic: it
// waits for the topic to appear, so consumers may start before producers. When nobody states
// a count, the first publish creates one partition. State it where the topic is born, or on
// both sides. Partitions can be added later, never removed.
//
// # Delivery and failures
//
// Delivery is at least once. A member that leaves (Close) drains its in-flight messages,
// flushes its acks and releases its leases. A member that crashes loses its leases after
// [MembershipConfig].LeaseTTL; the next owner claims the partition's unacked messages and
// delivers them first, in order. Acks are fenced by the lease: a member that lost a
// partition cannot ack there any more. Inside the context of a delivered message,
// [PartitionFromCtx], [StreamIDFromCtx], [DeliveryCountFromCtx] and [RetryCountFromCtx] say
// where it came from and how often it was tried.
//
// Publishing is once per message: a [Publisher] appends a message at most once to its
// partition, however often go-redis, streamq or the caller (after a failed Publish) sends it
// again to it, by producer and sequence number; [IdempotencyConfig].ByUUID also drops a UUID
// another Publisher appended within the window. [PublishedPartition] and [PublishedStreamID] say where a
// message went. [ReplicationConfig].MinReplicas makes Publish wait for replicas.
//
// Retention ([TrimConfig].MaxLen, [RetentionConfig].MaxAge) removes only entries
// every consumer group registered on the partition, live or not, has acked: a group that
// falls behind makes its partitions grow instead of losing messages, unless the policy is
// [TrimHard]. Payloads over [PayloadConfig].Threshold (64 KiB) are stored in keys of
// their own and loaded back for the handler.
//
// # Order and parallelism
//
// By default a partition runs one handler at a time. [DeliveryConfig].OrderByKey keeps
// order per partition key instead, with up to MaxInFlightPerPartition handlers of a
// partition at once (one per key); MaxInFlightPerPartition alone gives order up. [DeferAck]
// lets a handler return before its message is settled.
//
// A static member ([MembershipConfig].StaticMemberGrace with an explicit ConsumerName) keeps
// its partitions across a restart: its Close leaves them leased for the grace, the other
// members leave them alone, and its next process takes them back at once, fencing the old
// process out; after a crash, within one RebalanceInterval of the new process's start. A
// second live process with the name gets [ErrConsumerNameInUse].
//
// # Redis
//
// streamq needs Redis 7.0 or later ([MinRedisVersion]); the first Publish or Subscribe on a
// client checks every server behind it ([ErrUnsupportedServer]). Use maxmemory-policy
// noeviction. Every key of a partition shares the hash tag {topic:p:N}, so the same code runs
// on a single Redis, Sentinel or Redis Cluster through redis.UniversalClient. Neither Close
// closes the client passed in.
//
// # Operating it
//
// Package admin (and the streamq command built on it, cmd/streamq) lists topics, groups, lag
// and pending messages, resets offsets, pauses groups and replays dead letters; package
// dashboard is a web dashboard to mount in any HTTP server; package metrics/prometheus
// exports metrics through [PublisherConfig].Metrics and [SubscriberConfig].Metrics; the
// module github.com/streamq-dev/streamq/otel traces messages with OpenTelemetry through
// [PublisherConfig].Tracer and [SubscriberConfig].Tracer.
//
// # How it is built
//
// This package is the API: what a Watermill user reads, the config groups, and one seam
// (wire.go) that maps them onto the engine. The engine lives in internal/ packages by
// concern: the publish engine (pipelines, idempotency), the consume engine (one
// subscription's partitions: fetch, deliver, settle, ack, claim, move, housekeep), the
// membership engine (leases, rebalancing, static members), the retry decision and outage
// state, server and memory checks; below them the storage steps (one Lua script per atomic
// step), reached through a store built once per owned partition. docs/internals.md in the
// repository maps the packages, the import rule and every key.
package streamq
