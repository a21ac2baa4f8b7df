package publish

import (
	"context"
	"time"

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
// again in their order), and points each result at its place in the reply.
func (b *onceBatches) queue(ctx context.Context, pipe redis.Pipeliner) {
	now := time.Now().UnixMilli()
	for _, batch := range b.all {
		at := now / batch.half
		names := make([]string, 0, 6+len(batch.keys))
		names = append(names, batch.stream, batch.index)
		for n := at - 2; n <= at+1; n++ {
			names = append(names, keys.IdempotencyBucket(batch.prefix, n))
		}
		names = append(names, batch.keys...)
		args := append([]any{batch.half, at, batch.ttl, len(batch.results)}, batch.args...)
		cmd := appendScript.EvalSha(ctx, pipe, names, args...)
		for i, r := range batch.results {
			*r = Result{cmd: cmd, append: true, at: i}
		}
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
