// Package streamq is a Watermill Pub/Sub on Redis Streams with Kafka-style partitioned
// topics.
//
// A topic is P Redis streams ("partitions"). The Publisher routes each message by its
// partition key (metadata "partition_key" by default) with the same murmur2 hash Kafka's
// default partitioner uses, so one key always lands on one partition and keeps its order.
// The Subscriber joins a consumer group: every partition is leased to exactly one live
// member of the group at a time, members share the partitions fairly (max - min <= 1) and
// stickily (a join moves only the partitions the newcomer needs), and each owned partition
// is delivered in stream order, one message at a time until it is acked.
//
// A member that leaves hands its partitions over gracefully: it stops fetching, waits for
// in-flight messages, flushes acks and releases its leases. A member that crashes loses its
// leases after LeaseTTL; the new owner claims the partition's pending entries at once, so
// nothing that was published is lost (at-least-once). Acks are fenced by the lease: a member
// that lost a partition cannot ack on it any more.
//
// A static member (SubscriberConfig.StaticMemberGrace with an explicit ConsumerName) keeps
// its partitions across a restart: its Close leaves them leased for the grace, the other
// members do not take them meanwhile, and its next process takes them back at once (after a
// crash, once the dead process's presence ran out: at most three quarters of a
// RebalanceInterval after its last refresh, so within one RebalanceInterval of the new
// process's start), fencing the old process out. A second live process with the name is
// refused with ErrConsumerNameInUse.
//
// A topic's partition count is fixed by whoever states one: admin.CreateTopic, or a
// Publisher or Subscriber whose DefaultPartitionCount is set and that finds the topic missing.
// A Subscriber that states none never creates a topic: it waits for the topic to appear, then
// joins it, so consumers may start before producers. When nobody states a count, the first
// publish creates one partition.
//
// Retention (PublisherConfig.MaxLen, SubscriberConfig.Retention) removes only entries that
// every consumer group registered on the partition, live or not, has been delivered and acked,
// unless TrimPolicy is TrimHard; a group that falls behind makes its partitions grow instead.
//
// Every key of one partition shares the hash tag {topic:p:N}, so the same code runs on a
// single Redis, Sentinel or a Redis Cluster through redis.UniversalClient.
//
// streamq needs Redis 7.0 or later (MinRedisVersion). The first Publish and Subscribe on a
// client check every server behind it (ErrUnsupportedServer) and log once a maxmemory-policy
// other than noeviction, under which Redis may evict leases, retries, payloads and streams; a
// server that refuses INFO to the client's ACL user is not checked. PublisherConfig.MinReplicas
// makes Publish return only once that many replicas have the messages (ErrNotReplicated).
// After Publish returned, PublishedPartition and PublishedStreamID say where each message
// went (Publish records them on the message, never in the entry).
//
// A Publisher appends each message at most once to its partition within
// PublisherConfig.IdempotencyWindow, by its UUID, so a publish sent again after a lost reply
// or by the caller's retry appends nothing twice. SubscriberConfig.OrderByKey keeps order per
// partition key instead of per partition, with up to MaxInFlightPerPartition handlers of a
// partition at once.
//
// Quick start (the Router example below; examples/quickstart is a program that runs it):
//
//	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	pub, err := streamq.NewPublisher(streamq.PublisherConfig{
//		Client:                client,
//		DefaultPartitionCount: 8, // the topic's count, whichever side creates it
//	}, logger)
//	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{
//		Client:                client,
//		ConsumerGroup:         "payments",
//		DefaultPartitionCount: 8, // state it on both sides, or create the topic first
//	}, logger)
//	router.AddConsumerHandler("payments", "orders", sub, func(msg *message.Message) error {
//		p, _ := streamq.PartitionFromCtx(msg.Context())
//		...
//	})
//
// Neither Close closes the Redis client passed in.
//
// PublisherConfig.Tracer and SubscriberConfig.Tracer trace every publish, delivery, retry,
// dead letter and replay, with the W3C trace context in the message's metadata: the module
// github.com/streamq-dev/streamq/otel implements the Tracer interface for OpenTelemetry, so
// this module depends on no tracing library. Without a Tracer nothing is traced or written.
//
// # How it is built
//
// This package holds the API and the consumer engine; every Redis command, pipeline and
// script lives in internal/ packages, one per concept (keys, topic metadata, leases, a
// partition's read position, stream reads and acks, retries and delays, dead letters,
// payloads, retention, the lease fence). A subscription runs a rebalancer and a renewer,
// and one worker per owned partition with its claimer, acker, settler, mover and
// housekeeper, each built from explicit dependencies. One message goes: Publish, one
// pipelined XADD, a fetcher's read round, the partition's read position, the delivery
// loop and the handler, one settling decision (ack, retry, dead letter, replay, drop), the
// acker's fenced batch. README's "Development" section has the package table.
package streamq
