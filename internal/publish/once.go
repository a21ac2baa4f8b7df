package publish

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// maxOnce is the most idempotent appends sent in one script call: a Lua call's arguments
// are unpacked onto its stack, which holds a few thousand values.
const maxOnce = 256

// onceBatch is the idempotent appends to one partition sent as one append.lua call, and the
// results waiting for its reply.
type onceBatch struct {
	stream, prefix, index string
	half, ttl             int64 // half: the bucket length ms (half the window)
	keys                  []string
	args                  []any
	results               []*Result
	cmd                   *redis.Cmd // the call last queued
}

// onceBatches groups a pipeline's idempotent appends by partition, in order.
type onceBatches struct {
	open map[string]*onceBatch // by stream: the batch still taking writes
	all  []*onceBatch
}

// add puts w in its partition's batch; r gets the result once queued.
func (b *onceBatches) add(w Write, r *Result) {
	a := w.appendParts()
	batch := b.open[a.stream]
	if batch == nil || len(batch.results) == maxOnce {
		batch = &onceBatch{stream: a.stream, prefix: w.Once.Prefix, index: w.Once.Index,
			half: max(w.Once.Window.Milliseconds()/2, 1)}
		if b.open == nil {
			b.open = map[string]*onceBatch{}
		}
		b.open[a.stream] = batch
		b.all = append(b.all, batch)
	}
	if a.ref != "" {
		batch.keys = append(batch.keys, a.pkey)
		batch.ttl = a.ttl
	}
	batch.args = append(batch.args, w.Once.UUID, a.ref, a.body, len(a.fields))
	batch.args = append(batch.args, a.fields...)
	batch.results = append(batch.results, r)
}

// queue adds one append.lua call per batch to pipe, by SHA (see internal/script: every append
// of the pipeline goes by the same SHA, so a NOSCRIPT refuses them all and they are sent
// again in their order), with the buckets of now (ms: the server's clock as this process
// estimates it, see serverNow).
func (b *onceBatches) queue(ctx context.Context, pipe redis.Pipeliner, now int64) {
	for _, batch := range b.all {
		batch.queue(ctx, pipe, now)
	}
}

// queue adds the batch's append.lua call to pipe and points each result at its place in the
// reply. It names the buckets from the second before now's to the one skewLag after now (one
// bucket after now's at least): the script, which reads the server's clock, looks in the
// server's bucket and the two before it, and refuses the call when they are not all named.
func (batch *onceBatch) queue(ctx context.Context, pipe redis.Pipeliner, now int64) {
	at := now / batch.half
	lead := max(1, (skewLag.Milliseconds()+batch.half-1)/batch.half)
	first, nb := at-2, 3+lead
	names := make([]string, 0, 2+nb+int64(len(batch.keys)))
	names = append(names, batch.stream, batch.index)
	for n := first; n < first+nb; n++ {
		names = append(names, keys.IdempotencyBucket(batch.prefix, n))
	}
	names = append(names, batch.keys...)
	args := append([]any{batch.half, first, nb, batch.ttl, len(batch.results)}, batch.args...)
	batch.cmd = appendScript.EvalSha(ctx, pipe, names, args...)
	for i, r := range batch.results {
		*r = Result{cmd: batch.cmd, append: true, at: i}
	}
}

// toAppend is what an XAdd or Offload write appends: the stream, the payload key,
// reference, bytes and TTL (ms) of an offloaded payload ("" and nil when inline), the fields.
type toAppend struct {
	stream, pkey, ref string
	body              []byte
	ttl               int64
	fields            []any
}

// appendParts is what w appends.
func (w Write) appendParts() toAppend {
	if off := w.Offload; off != nil {
		return toAppend{off.Stream, off.Key, off.Ref, off.Payload, off.TTL.Milliseconds(), off.Fields}
	}
	stream, _ := w.XAdd[1].(string)
	return toAppend{stream: stream, fields: w.XAdd[3:]}
}
