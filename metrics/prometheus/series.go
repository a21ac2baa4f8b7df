package prometheus

import (
	"strconv"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/streamq-dev/streamq"
)

// Cache keys and the series resolved for them. Values are pointers so a cache hit is a
// map load and a type assertion to a concrete type.

type topicPartition struct {
	topic     string
	partition int
}

type trimKey struct {
	labels streamq.Labels
	kind   string
}

type counterSeries struct{ c prom.Counter }

// partitionSeries are the series of one partition of one member.
type partitionSeries struct {
	consumed, acked, retried, deadLettered, payloadMissing prom.Counter
	handle, backpressure                                   prom.Observer
}

// subscriptionSeries are the gauges of one member on one topic.
type subscriptionSeries struct {
	inFlight, eligible, leased, maxLeased, pausedSince prom.Gauge
}

// serverSeries are the memory gauges of one Redis server.
type serverSeries struct {
	used, max, high, fullSince prom.Gauge
}

// topicSeries are the DLQ series of one topic.
type topicSeries struct {
	deleted, cleared prom.Counter
	replay           prom.Observer
}

func (v vecs) producedSeries(k topicPartition) *counterSeries {
	return &counterSeries{c: v.produced.WithLabelValues(k.topic, strconv.Itoa(k.partition))}
}

func (v vecs) duplicateSeries(k topicPartition) *counterSeries {
	return &counterSeries{c: v.duplicates.WithLabelValues(k.topic, strconv.Itoa(k.partition))}
}

func (v vecs) partitionSeries(l streamq.Labels) *partitionSeries {
	lv := []string{l.Topic, strconv.Itoa(l.Partition), l.Group, l.Consumer}
	return &partitionSeries{
		consumed:       v.consumed.WithLabelValues(lv...),
		acked:          v.acked.WithLabelValues(lv...),
		retried:        v.retried.WithLabelValues(lv...),
		deadLettered:   v.deadLettered.WithLabelValues(lv...),
		payloadMissing: v.payloadMissing.WithLabelValues(lv...),
		handle:         v.handle.WithLabelValues(lv...),
		backpressure:   v.backpressure.WithLabelValues(lv...),
	}
}

func (v vecs) subscriptionSeries(l streamq.Labels) *subscriptionSeries {
	lv := []string{l.Topic, l.Group, l.Consumer}
	return &subscriptionSeries{
		inFlight:    v.inFlight.WithLabelValues(lv...),
		eligible:    v.eligiblePartitions.WithLabelValues(lv...),
		leased:      v.leasedPartitions.WithLabelValues(lv...),
		maxLeased:   v.maxLeasedPartitions.WithLabelValues(lv...),
		pausedSince: v.pausedSince.WithLabelValues(lv...),
	}
}

func (v vecs) serverSeries(addr string) *serverSeries {
	return &serverSeries{
		used:      v.usedMemory.WithLabelValues(addr),
		max:       v.maxMemory.WithLabelValues(addr),
		high:      v.memoryHigh.WithLabelValues(addr),
		fullSince: v.fullSince.WithLabelValues(addr),
	}
}

func (v vecs) topicSeries(topic string) *topicSeries {
	return &topicSeries{
		deleted: v.dlqDeleted.WithLabelValues(topic),
		cleared: v.dlqCleared.WithLabelValues(topic),
		replay:  v.dlqReplay.WithLabelValues(topic),
	}
}

func (v vecs) trimmedSeries(k trimKey) *counterSeries {
	l := k.labels
	return &counterSeries{c: v.trimmed.WithLabelValues(l.Topic, strconv.Itoa(l.Partition), l.Group, l.Consumer, k.kind)}
}
