package prometheus

import (
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"
)

// Label names.
var (
	topicLabels        = []string{"topic"}
	producedLabels     = []string{"topic", "partition"}
	partitionLabels    = []string{"topic", "partition", "group", "consumer"}
	trimmedLabels      = []string{"topic", "partition", "group", "consumer", "kind"}
	subscriptionLabels = []string{"topic", "group", "consumer"}
	expiredLabels      = []string{"topic", "partition", "group"}
	serverLabels       = []string{"server"}
)

// vecs are the metric families, one per exported metric.
type vecs struct {
	produced       *prom.CounterVec
	duplicates     *prom.CounterVec
	consumed       *prom.CounterVec
	acked          *prom.CounterVec
	retried        *prom.CounterVec
	deadLettered   *prom.CounterVec
	payloadMissing *prom.CounterVec
	dlqDeleted     *prom.CounterVec
	dlqCleared     *prom.CounterVec
	trimmed        *prom.CounterVec
	groupExpired   *prom.CounterVec

	inFlight            *prom.GaugeVec
	eligiblePartitions  *prom.GaugeVec
	leasedPartitions    *prom.GaugeVec
	maxLeasedPartitions *prom.GaugeVec
	pausedSince         *prom.GaugeVec
	outageSince         *prom.GaugeVec
	outageProbes        *prom.GaugeVec

	usedMemory, maxMemory, memoryHigh, fullSince *prom.GaugeVec

	handle       *prom.HistogramVec
	backpressure *prom.HistogramVec
	dlqReplay    *prom.HistogramVec

	all []family // every family above, in registration order
}

// family is a metric family with its fully-qualified name.
type family struct {
	name string
	c    prom.Collector
}

func newVecs(ns string, buckets []float64) vecs {
	var all []family
	add := func(name string, c prom.Collector) {
		all = append(all, family{name: prom.BuildFQName(ns, "", name), c: c})
	}
	counter := func(name, help string, labels []string) *prom.CounterVec {
		v := prom.NewCounterVec(prom.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
		add(name, v)
		return v
	}
	gaugeOf := func(labels []string) func(name, help string) *prom.GaugeVec {
		return func(name, help string) *prom.GaugeVec {
			v := prom.NewGaugeVec(prom.GaugeOpts{Namespace: ns, Name: name, Help: help}, labels)
			add(name, v)
			return v
		}
	}
	gauge := gaugeOf(subscriptionLabels)
	histogram := func(name, help string, labels []string) *prom.HistogramVec {
		v := prom.NewHistogramVec(prom.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets}, labels)
		add(name, v)
		return v
	}
	v := vecs{
		produced:       counter("produced_total", "Messages appended (or parked with a delay) by publishers.", producedLabels),
		duplicates:     counter("publish_duplicates_total", "Messages a publisher's idempotent append dropped: appended to the partition within the window already.", producedLabels),
		consumed:       counter("consumed_total", "Messages handed to a handler, every delivery.", partitionLabels),
		acked:          counter("acked_total", "Messages acked by a handler.", partitionLabels),
		retried:        counter("retried_total", "Nacked messages scheduled for a retry.", partitionLabels),
		deadLettered:   counter("dead_lettered_total", "Messages written to the dead-letter queue.", partitionLabels),
		payloadMissing: counter("payload_missing_total", "Entries whose offloaded payload was gone.", partitionLabels),
		dlqDeleted:     counter("dlq_deleted_total", "Dead letters deleted by admin.", topicLabels),
		dlqCleared:     counter("dlq_cleared_total", "Dead letters cleared by admin.", topicLabels),
		trimmed:        counter("trimmed_total", "Entries removed by retention, by kind.", trimmedLabels),
		groupExpired:   counter("group_expired_total", "Times retention left a consumer group out on a partition: no live member there for the group expiry.", expiredLabels),

		inFlight:            gauge("in_flight", "Unacked messages of a subscription."),
		eligiblePartitions:  gauge("eligible_partitions", "Partitions this member may lease."),
		leasedPartitions:    gauge("leased_partitions", "Partitions this member leases."),
		maxLeasedPartitions: gauge("max_leased_partitions", "Cap on the partitions this member leases (0: none)."),
		pausedSince: gauge("paused_since_seconds",
			"Unix time the subscription's delivery was paused (Subscriber.Pause or admin.PauseGroup); 0 while it is not paused."),

		handle:       histogram("handle_seconds", "Time from handing a message over to its Ack or Nack.", partitionLabels),
		backpressure: histogram("backpressure_wait_seconds", "Time a fetched message waited for an in-flight slot.", partitionLabels),
		dlqReplay:    histogram("dlq_replay_seconds", "Time of one replay of a dead letter.", topicLabels),
	}
	v.outageSince, v.outageProbes = outageGauges(gaugeOf(partitionLabels))
	v.usedMemory, v.maxMemory, v.memoryHigh, v.fullSince = serverGauges(gaugeOf(serverLabels))
	v.all = all
	return v
}

// outageGauges are the gauges of partitions waiting out a downstream outage, made by gauge.
func outageGauges(gauge func(name, help string) *prom.GaugeVec) (since, probes *prom.GaugeVec) {
	return gauge("outage_since_seconds",
			"Unix time a partition started waiting out a downstream outage (streamq.Outage, Retry.Outage); 0 while it is not."),
		gauge("outage_probes_failed", "Probes that failed in a partition's current downstream outage; 0 while there is none.")
}

// serverGauges are the memory gauges of the Redis servers, made by gauge.
func serverGauges(gauge func(name, help string) *prom.GaugeVec) (used, maxMemory, high, fullSince *prom.GaugeVec) {
	return gauge("redis_used_memory_bytes", "Used memory of a Redis server (INFO memory used_memory), as a publisher's or subscriber's memory watch last read it."),
		gauge("redis_max_memory_bytes", "maxmemory of a Redis server; 0: no limit."),
		gauge("redis_memory_high", "1 while a Redis server's used memory is at or above the high-water mark of its maxmemory (MemoryWatch.HighWater), else 0."),
		gauge("redis_full_since_seconds", "Unix time a Redis server was first seen at maxmemory, refusing publishes; 0 while it is not full.")
}

// register registers every family on r, or none: on an error it unregisters the families
// registered so far.
func (v vecs) register(r prom.Registerer) error {
	for i, f := range v.all {
		if err := r.Register(f.c); err != nil {
			for _, done := range v.all[:i] {
				r.Unregister(done.c)
			}
			return fmt.Errorf("register %s: %w", f.name, err)
		}
	}
	return nil
}
