package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/codec"
	"github.com/streamq-dev/streamq/internal/importsrc"
	"github.com/streamq-dev/streamq/internal/partition"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Steps of one import: newImport reads the source group, the checkpoint and the topic; run
// takes the lock, declares the target group, then per batch of the backlog: read -> decode
// (skipping what the checkpoint covers) -> publish -> record the checkpoint -> ack the
// source (SourceAck) -> report progress; the lock is released last. dryRun reads and
// decodes only.

// importRun is one import.
type importRun struct {
	a    *Admin
	o    ImportOptions
	snap importsrc.Snapshot
	keys importsrc.Keys
	// copied and moved are the checkpoint's ids for the source group (importsrc.Copied,
	// importsrc.Moved; "" when unset).
	copied, moved string
	partitions    int
	meta          partition.Meta // the topic's, when it exists
	token         string
	pub           *streamq.Publisher
	counts        *importCounts
	res           ImportResult
}

func (r *importRun) readCheckpoint(ctx context.Context) error {
	got, err := importsrc.Read(ctx, r.a.rdb, r.keys,
		importsrc.Field(importsrc.Copied, r.o.Stream, r.o.Group), importsrc.Field(importsrc.Moved, r.o.Stream, r.o.Group))
	if err != nil {
		return err
	}
	r.copied, r.moved = got[0], got[1]
	return nil
}

// readTopic reads the topic's partition count and retention; a missing topic needs
// Partitions.
func (r *importRun) readTopic(ctx context.Context) error {
	m, err := r.a.topicMeta(ctx, r.o.Topic)
	switch {
	case errors.Is(err, ErrTopicNotFound):
		if r.o.Partitions == 0 {
			return fmt.Errorf("import: %w: topic %q does not exist: give its partition count", ErrInvalidArgument, r.o.Topic)
		}
		r.partitions = r.o.Partitions
		return nil
	case err != nil:
		return err
	case r.o.Partitions != 0 && r.o.Partitions != m.Count:
		return fmt.Errorf("import: %w: topic %q has %d partitions, not %d (grow it first)", ErrInvalidArgument, r.o.Topic, m.Count, r.o.Partitions)
	}
	r.partitions, r.meta = m.Count, m
	return nil
}

// skip reports whether an earlier import took e already: a run that kept the source went
// through every entry not acked up to copied; one that acked it took moved's entries as the
// import's consumer, so those still pending there were appended and not yet acked.
func (r *importRun) skip(e backlogEntry) bool {
	if r.copied != "" && !streamid.Less(r.copied, e.id) {
		return true
	}
	return e.own && r.moved != "" && !streamid.Less(r.moved, e.id)
}

// run imports the whole backlog under the topic's import lock.
func (r *importRun) run(ctx context.Context) (ImportResult, error) {
	r.token = rand.Text()
	ok, err := importsrc.Lock(ctx, r.a.rdb, r.keys, r.token, ImportLockTTL)
	if err != nil {
		return r.res, err
	}
	if !ok {
		return r.res, fmt.Errorf("%w: %q (lock %s)", ErrImportRunning, r.o.Topic, r.keys.Lock)
	}
	defer func() { _ = importsrc.Unlock(context.WithoutCancel(ctx), r.a.rdb, r.keys, r.token) }()
	if err := r.declareTarget(ctx); err != nil {
		return r.res, err
	}
	if r.pub, err = r.publisher(); err != nil {
		return r.res, err
	}
	defer func() { _ = r.pub.Close() }()
	err = r.each(ctx, r.o.Source == SourceAck, r.importBatch)
	r.res.Imported, r.res.Duplicates, r.res.ByPartition = r.counts.totals()
	return r.res, err
}

// each reads the backlog batch by batch (taking it as the import's consumer when take) and
// hands each batch to fn, then reports progress.
func (r *importRun) each(ctx context.Context, take bool, fn func(context.Context, []backlogEntry) error) error {
	b := newBacklog(r.a.rdb, r.o, r.snap, take)
	total := r.snap.Pending + max(r.snap.Lag, 0)
	if r.snap.Lag < 0 {
		total = 0
	}
	var done int64
	for {
		batch, err := b.next(ctx)
		if err != nil || len(batch) == 0 {
			return err
		}
		if err := fn(ctx, batch); err != nil {
			return err
		}
		done += int64(len(batch))
		r.res.LastID = batch[len(batch)-1].id
		if r.o.Progress != nil {
			r.o.Progress(ImportProgress{Done: done, Total: max(total, done)})
		}
	}
}

// declareTarget declares the target group on the topic at 0-0 unless it is declared: the
// Publisher's first append creates it on every partition (see streamq's createDeclaredGroups).
func (r *importRun) declareTarget(ctx context.Context) error {
	declared, err := r.a.reg.DeclaredGroups(ctx, r.o.Topic)
	if err != nil || slices.Contains(declared, r.o.TargetGroup) {
		return err
	}
	return r.a.reg.DeclareGroup(ctx, r.o.Topic, r.o.TargetGroup, "0-0")
}

// importBatch appends a batch's messages, records the checkpoint and acks the batch on the
// source (SourceAck).
func (r *importRun) importBatch(ctx context.Context, batch []backlogEntry) error {
	msgs, err := r.decode(ctx, batch)
	if err != nil {
		return err
	}
	if len(msgs) > 0 {
		if err := r.pub.Publish(r.o.Topic, msgs...); err != nil {
			return fmt.Errorf("import into %q: %w", r.o.Topic, err)
		}
	}
	if err := r.record(ctx, batch[len(batch)-1].id); err != nil {
		return err
	}
	if r.o.Source != SourceAck {
		return nil
	}
	n, err := importsrc.Ack(ctx, r.a.rdb, r.o.Stream, r.o.Group, ids(batch))
	r.res.Acked += n
	return err
}

// record moves the checkpoint to last, never back: a run again first goes through pending
// entries older than what an earlier run recorded.
func (r *importRun) record(ctx context.Context, last string) error {
	kind, mark := importsrc.Copied, &r.copied
	if r.o.Source == SourceAck {
		kind, mark = importsrc.Moved, &r.moved
	}
	if *mark != "" && !streamid.Less(*mark, last) {
		return importsrc.Record(ctx, r.a.rdb, r.keys, r.token, ImportLockTTL) // extends the lock
	}
	if err := importsrc.Record(ctx, r.a.rdb, r.keys, r.token, ImportLockTTL, importsrc.Field(kind, r.o.Stream, r.o.Group), last); err != nil {
		return err
	}
	*mark = last
	return nil
}

func ids(batch []backlogEntry) []string {
	out := make([]string, len(batch))
	for i, e := range batch {
		out[i] = e.id
	}
	return out
}

// decode counts a batch's entries and returns the messages to append: not those the
// checkpoint covers, nor those gone from the stream.
func (r *importRun) decode(ctx context.Context, batch []backlogEntry) ([]*message.Message, error) {
	var msgs []*message.Message
	for _, e := range batch {
		if e.pending {
			r.res.Pending++
		} else {
			r.res.Undelivered++
		}
		switch {
		case r.skip(e):
			r.res.Skipped++
		case e.values == nil:
			r.res.Missing++
		default:
			msg, err := r.message(ctx, e)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, msg)
		}
	}
	return msgs, nil
}

// message decodes an entry into the message to append, its partition key in its context.
func (r *importRun) message(ctx context.Context, e backlogEntry) (*message.Message, error) {
	uuid, md, body, err := codec.Decode(e.values)
	if err != nil {
		return nil, fmt.Errorf("import entry %s of stream %q: %w", e.id, r.o.Stream, err)
	}
	msg := message.NewMessage(uuid, []byte(body))
	msg.Metadata = md
	key := md[r.o.KeyMetadata]
	if r.o.KeyField != "" {
		key, _ = e.values[r.o.KeyField].(string)
	}
	if r.o.SetKeyMetadata != "" && key != "" {
		msg.Metadata.Set(r.o.SetKeyMetadata, key)
	}
	msg.SetContext(context.WithValue(ctx, importKey{}, key))
	return msg, nil
}

// importKey is the context key of an imported message's partition key.
type importKey struct{}

// importedKey is the import Publisher's PartitionKey.
func importedKey(_ string, msg *message.Message) string {
	key, _ := msg.Context().Value(importKey{}).(string)
	return key
}

// publisher is the import's Publisher: the topic's recorded length retention (so that
// registering the topic again records the same), the Admin's payload offloading, the
// import's routing and idempotency window.
func (r *importRun) publisher() (*streamq.Publisher, error) {
	r.counts = newImportCounts()
	return streamq.NewPublisher(streamq.PublisherConfig{
		Client: r.a.rdb, Keyspace: streamq.Keyspace{StreamPrefix: r.a.space.Stream, ControlPrefix: r.a.space.Control},
		DefaultPartitionCount: r.partitions, Partitioning: streamq.PartitioningConfig{Partitioner: r.o.Partitioner, PartitionKey: importedKey},
		Trim:        streamq.TrimConfig{MaxLen: r.meta.MaxLen, Exact: r.meta.ExactLen, Policy: streamq.TrimPolicy(r.meta.TrimPolicy)},
		Payloads:    streamq.PayloadConfig{Threshold: r.a.offload.threshold, TTL: r.a.offload.ttl},
		Idempotency: r.idempotency(), Metrics: r.counts,
	}, nil)
}

// idempotency is the import Publisher's: by UUID, so an import run again (another
// Publisher) appends nothing it appended before within the window.
func (r *importRun) idempotency() streamq.IdempotencyConfig {
	if r.o.IdempotencyWindow < 0 {
		return streamq.IdempotencyConfig{Window: -1}
	}
	return streamq.IdempotencyConfig{Window: r.o.IdempotencyWindow, ByUUID: true}
}

// dryRun reads the backlog without taking it and counts what an import would do.
func (r *importRun) dryRun(ctx context.Context) (ImportResult, error) {
	err := r.each(ctx, false, func(ctx context.Context, batch []backlogEntry) error {
		msgs, err := r.decode(ctx, batch)
		for _, msg := range msgs {
			r.res.Imported++
			if p, ok := r.partitionOf(msg); ok {
				r.res.ByPartition[p]++
			}
		}
		return err
	})
	return r.res, err
}

// partitionOf is the partition the import's Publisher would route msg to; false for a
// message without a key when the idempotency window is off (a random partition).
func (r *importRun) partitionOf(msg *message.Message) (int, bool) {
	key := importedKey(r.o.Topic, msg)
	if key == "" && r.o.IdempotencyWindow < 0 {
		return 0, false
	}
	if key == "" {
		key = msg.UUID
	}
	return r.o.Partitioner.Partition(key, r.partitions), true
}
