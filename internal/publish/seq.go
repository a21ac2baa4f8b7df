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

// Sequenced makes an append idempotent by its producer and sequence number: a producer
// numbers its appends to each partition 1, 2, 3, ... and the partition's key of the producer
// (Prefix + ":" + Producer; Prefix is keys.Space.Producers of the partition) records which numbers were appended, for
// Window after the producer's last append. An append of a number already appended appends
// nothing. A Sequencer numbers the appends of one producer; a write sent again keeps its
// Producer and Seq.
type Sequenced struct {
	Prefix, Index string // Prefix: keys.Space.Producers of the partition; Index: its payload index
	Producer      string
	Seq           uint64 // 0: not numbered yet (a Sequencer numbers it)
	Window        time.Duration
}

// key is the producer's key of the partition.
func (s *Sequenced) key() string { return s.Prefix + ":" + s.Producer }

// Sequencer numbers the sequenced appends of one producer, per partition, in the order they
// are sent. It is not safe for concurrent use: each flusher has its own.
type Sequencer struct {
	Producer string
	next     map[string]uint64 // by Sequenced.Prefix: the last number given
}

// Number gives every sequenced write of calls that has no number yet the producer and the
// partition's next number, in order.
func (q *Sequencer) Number(calls []*Call) {
	for _, c := range calls {
		for _, w := range c.Writes {
			s := w.Seq
			if s == nil || s.Seq != 0 {
				continue
			}
			if q.next == nil {
				q.next = map[string]uint64{}
			}
			q.next[s.Prefix]++
			s.Producer, s.Seq = q.Producer, q.next[s.Prefix]
		}
	}
}

// seqBatch is the sequenced appends to one partition sent as one appendseq.lua call, and the
// results waiting for its reply. Its messages go in runs (see appendseq.lua): run is the
// place in args of the open run's header.
type seqBatch struct {
	stream, index string
	window, ttl   int64 // ms: the producer keys' and the offloaded payloads' TTL
	producers     []string
	slot          map[string]int // producer id -> the 1-based place of its key in producers
	payloadKeys   []string
	args          []any // per run: producer, first number, k, f, offloaded; then the messages
	runs          int
	run           int
	last          seqRunKey // what the open run continues
	results       []*Result
}

// seqRunKey is what decides whether a message continues the open run.
type seqRunKey struct {
	producer int
	seq      uint64
	f        int
	off      bool
}

// seqBatches groups a pipeline's sequenced appends by partition, in order.
type seqBatches struct {
	open map[string]*seqBatch // by stream: the batch still taking writes
	all  []*seqBatch
}

// add puts w in its partition's batch; r gets the result once queued.
func (b *seqBatches) add(w Write, r *Result) {
	a := w.appendParts()
	batch := b.open[a.stream]
	if batch == nil || len(batch.results) == maxOnce {
		batch = &seqBatch{stream: a.stream, index: w.Seq.Index, window: max(w.Seq.Window.Milliseconds(), 1),
			slot: map[string]int{}}
		if b.open == nil {
			b.open = map[string]*seqBatch{}
		}
		b.open[a.stream] = batch
		b.all = append(b.all, batch)
	}
	batch.add(w.Seq, a)
	batch.results = append(batch.results, r)
}

func (batch *seqBatch) add(s *Sequenced, a toAppend) {
	at, ok := batch.slot[s.Producer]
	if !ok {
		batch.producers = append(batch.producers, s.key())
		at = len(batch.producers)
		batch.slot[s.Producer] = at
	}
	f := len(a.fields)
	if defaultLayout(a.fields) {
		f = -1 // the values only (appendseq.lua)
	}
	next := seqRunKey{producer: at, seq: s.Seq, f: f, off: a.ref != ""}
	if batch.runs == 0 || next != (seqRunKey{batch.last.producer, batch.last.seq + 1, batch.last.f, batch.last.off}) {
		off := 0
		if next.off {
			off = 1
		}
		batch.run = len(batch.args)
		batch.args = append(batch.args, at, s.Seq, 0, f, off)
		batch.runs++
	}
	batch.args[batch.run+2] = batch.args[batch.run+2].(int) + 1
	batch.last = next
	if next.off {
		batch.payloadKeys = append(batch.payloadKeys, a.pkey)
		batch.ttl = a.ttl
		batch.args = append(batch.args, a.ref, a.body)
	}
	if f == -1 {
		batch.args = append(batch.args, a.fields[1], a.fields[3], a.fields[5])
		return
	}
	batch.args = append(batch.args, a.fields...)
}

// defaultLayout reports whether fields are the default Marshaler's three, in its order.
func defaultLayout(fields []any) bool {
	return len(fields) == 6 && fields[0] == any(codec.UUIDField) && fields[2] == any(codec.MetadataField) &&
		fields[4] == any(codec.PayloadField)
}

// maxSeqCall caps the messages of one appendseq.lua call over several partitions.
const maxSeqCall = 4 * maxOnce

// queue adds the appendseq.lua calls of the batches to pipe, by SHA (as onceBatches.queue),
// and points each result at its place in the reply: one call per partition on a Cluster
// (each call's keys in one slot), else one call over every partition, up to maxSeqCall
// messages each.
func (b *seqBatches) queue(ctx context.Context, pipe redis.Pipeliner, cluster bool) {
	var call []*seqBatch
	n := 0
	for _, batch := range b.all {
		if len(call) > 0 && (cluster || n+len(batch.results) > maxSeqCall) {
			queueSeqCall(ctx, pipe, call)
			call, n = call[:0], 0
		}
		call = append(call, batch)
		n += len(batch.results)
	}
	if len(call) > 0 {
		queueSeqCall(ctx, pipe, call)
	}
}

// queueSeqCall adds one appendseq.lua call of the partitions' batches to pipe.
func queueSeqCall(ctx context.Context, pipe redis.Pipeliner, batches []*seqBatch) {
	var names []string
	args := []any{batches[0].window, int64(0), len(batches), codec.UUIDField, codec.MetadataField, codec.PayloadField}
	for _, batch := range batches {
		names = append(names, batch.stream, batch.index)
		names = append(names, batch.producers...)
		names = append(names, batch.payloadKeys...)
		args = append(args, len(batch.producers), batch.runs)
		args = append(args, batch.args...)
		args[1] = max(args[1].(int64), batch.ttl)
	}
	cmd := appendSeqScript.EvalSha(ctx, pipe, names, args...)
	at := 0
	for _, batch := range batches {
		for _, r := range batch.results {
			*r = Result{cmd: cmd, append: true, at: at, flat: true}
			at++
		}
	}
}
