package publish

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/appendseq.lua
	appendSeqSrc    string
	appendSeqScript = script.New(appendSeqSrc)
)

// recordGroup is how many partitions of a topic share a producer's record on a single server
// (one key per producer and group, written once per pipeline); on a Cluster every partition
// has its own, in the partition's slot.
const recordGroup = 64

// Sequenced makes an append idempotent by its producer and sequence number: a producer
// numbers its appends to each partition 1, 2, 3, ... and its record (Record + ":" +
// Producer; Record is keys.Space.Producers of the first partition of the partition's
// group) holds, under the partition's Name, which numbers were appended, for Window after
// the producer's last append. An append of a number already appended appends nothing. A
// Sequencer numbers the appends of one producer; a write sent again keeps its Producer and
// Seq.
type Sequenced struct {
	Record, Name string // the prefix of the partition's records, and its name in them (its index)
	Index        string // the partition's payload index
	Producer     string
	Seq          uint64 // 0: not numbered yet (a Sequencer numbers it)
	Window       time.Duration
	fresh        bool // numbered by the flush that sends it: never sent before
}

// recordKey is the key of the producer's record.
func (s *Sequenced) recordKey() string { return s.Record + ":" + s.Producer }

// Sequencer is one producer (a flusher): it numbers the sequenced appends it sends, per
// partition, in the order they are sent, and knows what its records hold as long as every
// call that wrote them answered. It is not safe for concurrent use: each flusher has its own.
type Sequencer struct {
	Producer string
	next     map[partitionName]uint64 // the last number given in each partition
	views    map[string]*recordView   // by record key: what the record holds
}

// partitionName names a partition: its records' prefix and its name in them.
type partitionName struct{ record, name string }

// Number gives every sequenced write of calls that has no number yet the producer and the
// partition's next number, in order, and marks it fresh; a write that has one is not fresh.
func (q *Sequencer) Number(calls []*Call) {
	for _, c := range calls {
		for _, w := range c.Writes {
			s := w.Seq
			if s == nil {
				continue
			}
			if s.Seq != 0 {
				s.fresh = false
				continue
			}
			if q.next == nil {
				q.next = map[partitionName]uint64{}
			}
			k := partitionName{s.Record, s.Name}
			n := q.next[k] + 1
			q.next[k] = n
			s.Producer, s.Seq, s.fresh = q.Producer, n, true
		}
	}
}

// seqBatch is the sequenced appends to one partition in a pipeline, in order, and the
// results waiting for their call's reply.
type seqBatch struct {
	stream  string
	writes  []Write
	results []*Result
}

// seqBatches groups a pipeline's sequenced appends by partition, in order, and sends them
// as appendseq.lua calls (queue); once the pipeline answered, the sequencer learns what the
// records hold (learn).
type seqBatches struct {
	open  map[string]*seqBatch // by stream: the batch still taking writes
	all   []*seqBatch
	calls []*seqCall
}

// add puts w in its partition's batch; r gets the result once queued.
func (b *seqBatches) add(w Write, r *Result) {
	stream := w.appendParts().stream
	batch := b.open[stream]
	if batch == nil || len(batch.results) == maxOnce {
		batch = &seqBatch{stream: stream}
		if b.open == nil {
			b.open = map[string]*seqBatch{}
		}
		b.open[stream] = batch
		b.all = append(b.all, batch)
	}
	batch.writes = append(batch.writes, w)
	batch.results = append(batch.results, r)
}

// maxSeqCall caps the messages of one appendseq.lua call over several partitions.
const maxSeqCall = 4 * maxOnce

// queue adds the appendseq.lua calls of the batches to pipe, by SHA (as onceBatches.queue),
// and points each result at its place in the reply: one call per partition on a Cluster
// (each call's keys in one slot), else one call over every partition, up to maxSeqCall
// messages each. q (nil: none) is the producer that sends them, whose records' contents it
// states.
func (b *seqBatches) queue(ctx context.Context, pipe redis.Pipeliner, cluster bool, q *Sequencer) {
	var group []*seqBatch
	n := 0
	for _, batch := range b.all {
		if len(group) > 0 && (cluster || n+len(batch.results) > maxSeqCall) {
			b.calls = append(b.calls, queueSeqCall(ctx, pipe, group, q))
			group, n = group[:0], 0
		}
		group = append(group, batch)
		n += len(batch.results)
	}
	if len(group) > 0 {
		b.calls = append(b.calls, queueSeqCall(ctx, pipe, group, q))
	}
}

// learn tells q what the records of the calls hold, once the pipeline answered.
func (b *seqBatches) learn(q *Sequencer) {
	if q == nil {
		return
	}
	for _, c := range b.calls {
		c.learn(q)
	}
}

// defaultLayout reports whether fields are the default Marshaler's three, in its order.
func defaultLayout(fields []any) bool {
	return len(fields) == 6 && fields[0] == any(codec.UUIDField) && fields[2] == any(codec.MetadataField) &&
		fields[4] == any(codec.PayloadField)
}
