// Package prometheus implements streamq.MetricsCollector with the Prometheus client
// (github.com/prometheus/client_golang).
//
// Build a Collector with New and pass it as PublisherConfig.Metrics and
// SubscriberConfig.Metrics:
//
//	metrics, err := prometheus.New(prometheus.Options{}) // registers on prom.DefaultRegisterer
//	if err != nil {
//		return err
//	}
//	pub, err := streamq.NewPublisher(streamq.PublisherConfig{Client: client, Metrics: metrics}, logger)
//	sub, err := streamq.NewSubscriber(streamq.SubscriberConfig{Client: client, Metrics: metrics}, logger)
//
// # Metrics
//
// Names below use the default namespace "streamq"; Options.Namespace replaces that prefix.
// Histograms are in seconds with Options.Buckets (default DefaultBuckets, 1 ms to 60 s).
//
//	| metric                                | type      | labels                                   |
//	|---------------------------------------|-----------|------------------------------------------|
//	| streamq_produced_total                | counter   | topic, partition                         |
//	| streamq_publish_duplicates_total      | counter   | topic, partition                         |
//	| streamq_consumed_total                | counter   | topic, partition, group, consumer        |
//	| streamq_acked_total                   | counter   | topic, partition, group, consumer        |
//	| streamq_retried_total                 | counter   | topic, partition, group, consumer        |
//	| streamq_dead_lettered_total           | counter   | topic, partition, group, consumer        |
//	| streamq_payload_missing_total         | counter   | topic, partition, group, consumer        |
//	| streamq_dlq_deleted_total             | counter   | topic                                    |
//	| streamq_dlq_cleared_total             | counter   | topic                                    |
//	| streamq_trimmed_total                 | counter   | topic, partition, group, consumer, kind  |
//	| streamq_group_expired_total           | counter   | topic, partition, group                  |
//	| streamq_in_flight                     | gauge     | topic, group, consumer                   |
//	| streamq_eligible_partitions           | gauge     | topic, group, consumer                   |
//	| streamq_leased_partitions             | gauge     | topic, group, consumer                   |
//	| streamq_max_leased_partitions         | gauge     | topic, group, consumer                   |
//	| streamq_handle_seconds                | histogram | topic, partition, group, consumer        |
//	| streamq_backpressure_wait_seconds     | histogram | topic, partition, group, consumer        |
//	| streamq_dlq_replay_seconds            | histogram | topic                                    |
//
// The partition label is the decimal partition index. The gauges describe a whole
// subscription (one member of a group on one topic) and have no partition label. kind is
// "length" or "age" (entries a retention trim removed), "length-unacked" or "age-unacked" (of
// those, entries some group had not acked: under TrimHard, or needed only by an expired
// group), "unacked" (entries of the group label's group a hard cap or its expiry removed
// before it acked them), "dlq-age", "dlq-length" or "orphaned-payloads".
// streamq_group_expired_total counts the times a retention trim left the group label's group
// out of a partition for its GroupExpiry (streamq.GroupExpiryReporter), once per expiry.
//
// The first call with a new set of labels creates every series of that set at zero: a
// Consumed on partition 3 also exports streamq_acked_total, streamq_retried_total, ... and
// the two histograms of partition 3, so rates and ratios work from the start.
//
// # Cost and cardinality
//
// Resolving label values is the expensive part of a Prometheus update, so the Collector
// resolves each label set once and caches the series; later calls are a lock-free map
// load and an atomic add, without allocations. The cache, like the Prometheus series,
// lives as long as the Collector. The consumer label makes the number of series grow
// with every member name: give subscribers a stable MembershipConfig.ConsumerName (a
// host or pod name) rather than the random default.
package prometheus
