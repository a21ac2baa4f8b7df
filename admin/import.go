package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/importsrc"
	"github.com/streamq-dev/streamq/internal/keys"
)

// ImportSource says what an import does to the source stream's consumer group.
type ImportSource string

const (
	// SourceKeep leaves the source stream and its group as they were: the import only reads.
	// An old subscriber of the group that runs again delivers the imported entries again:
	// use it when the old subscribers are stopped for good, or for a copy.
	SourceKeep ImportSource = "keep"
	// SourceAck takes the backlog as a consumer of the group (ImportOptions.Consumer): it
	// claims the pending entries and reads the undelivered ones (XCLAIM, XREADGROUP: up to
	// the end of the batch that reaches the stream's newest entry when the import started),
	// and acks each batch once it is in the topic. Old subscribers still running share what is
	// left with the import instead of delivering it again, and the group reads as drained
	// afterwards. The entries stay in the stream (other groups may need them).
	SourceAck ImportSource = "ack"
)

// Defaults of ImportOptions.
const (
	// DefaultImportBatch is how many source entries an import reads, appends and
	// checkpoints at a time.
	DefaultImportBatch = 500
	// DefaultImportIdempotencyWindow is the idempotency window (by UUID) of an import's Publisher: an
	// import that failed between appending a batch and recording its checkpoint, run again
	// within it, appends nothing of that batch twice.
	DefaultImportIdempotencyWindow = time.Hour
	// DefaultImportConsumer is the consumer of the source group under which SourceAck takes
	// the entries it imports.
	DefaultImportConsumer = "streamq-import"
	// ImportLockTTL is how long an import's lock outlives its last batch: another import
	// into the same topic waits until then (ErrImportRunning) after one was killed.
	ImportLockTTL = 30 * time.Second
)

// ErrImportRunning reports an import refused because another import into the same topic
// holds the topic's import lock (or one was killed less than ImportLockTTL ago).
var ErrImportRunning = errors.New("another import into the topic is running")

// ImportOptions configures ImportRedisstream.
type ImportOptions struct {
	// Stream is the source stream: a watermill-redisstream topic's name is its stream key.
	// Required.
	Stream string
	// Group is the source consumer group whose backlog moves: its pending entries
	// (delivered, not acked) and the entries after its last-delivered id. Required.
	Group string
	// Topic is the streamq topic the entries go to. Optional; default Stream (the same
	// Watermill topic name: streamq's keys do not collide with the source stream).
	Topic string
	// Partitions is the topic's partition count. Required when the topic does not exist
	// yet (it is created with it); optional when it exists (0, or its count: another count
	// is ErrInvalidArgument, grow the topic first).
	Partitions int
	// TargetGroup is the streamq consumer group the entries are for: declared on the topic
	// at 0-0 before the first append (unless declared already), so its Subscriber receives
	// them whenever it starts and retention keeps them until it acks. Optional; default
	// Group.
	TargetGroup string
	// KeyMetadata is the metadata key holding each message's partition key. Optional;
	// default streamq.PartitionKeyMetadata ("partition_key"). A message without it is routed
	// by its UUID (so a run again routes it the same way).
	KeyMetadata string
	// KeyField takes the partition key from a field of the source entry instead (one a
	// custom watermill-redisstream Marshaller wrote besides the three of the default
	// format). Optional; default "": KeyMetadata. Setting both is ErrInvalidArgument.
	KeyField string
	// SetKeyMetadata writes each message's partition key into this metadata key of the
	// imported message (e.g. "partition_key", which streamq's default PartitionKey reads).
	// Optional; default "": the metadata is imported as it is.
	SetKeyMetadata string
	// Partitioner picks the partition from the key; it must be the topic's publishers'.
	// Optional; default streamq.HashPartitioner.
	Partitioner streamq.Partitioner
	// Source says what happens to the source group. Optional; default SourceKeep.
	Source ImportSource
	// Consumer is the source group's consumer SourceAck takes the entries as. Optional;
	// default DefaultImportConsumer.
	Consumer string
	// BatchSize is how many entries are read, appended and checkpointed at a time.
	// Optional; default DefaultImportBatch.
	BatchSize int
	// IdempotencyWindow is the import Publisher's Idempotency.Window, by UUID (see streamq.IdempotencyConfig): it covers
	// a run that stopped between appending a batch and recording it. The checkpoint covers
	// everything else, for ever. Memory: about 120 bytes per imported message for up to 1.5
	// windows. Optional; default DefaultImportIdempotencyWindow; -1: off.
	IdempotencyWindow time.Duration
	// DryRun reads the backlog and reports what an import would do, changing nothing (no
	// append, no checkpoint, no ack, no topic or group created).
	DryRun bool
	// Progress, when set, is called after each batch, from the calling goroutine.
	Progress func(ImportProgress)
}

// ImportProgress is how far an import got.
type ImportProgress struct {
	// Done is the number of backlog entries gone through (imported, skipped or missing).
	Done int64
	// Total is the backlog's size when the import started (pending + undelivered); 0 when
	// Redis cannot tell the undelivered count (after deletions or trimming of the stream).
	Total int64
}

// ImportResult is what an import did (or, in a dry run, would do).
type ImportResult struct {
	Stream, Group, Topic, TargetGroup string
	Source                            ImportSource
	DryRun                            bool
	// Partitions is the topic's partition count.
	Partitions int
	// Pending and Undelivered count the backlog entries gone through: those delivered to
	// the group and not acked, and those after its last-delivered id.
	Pending, Undelivered int64
	// Imported counts the messages appended to the topic (a dry run: that would be), and
	// ByPartition per partition (a dry run counts only keyed messages when
	// IdempotencyWindow is off: the others go to a random partition).
	Imported    int64
	ByPartition map[int]int64
	// Skipped counts the entries an earlier import took already (the checkpoint says so):
	// not appended again.
	Skipped int64
	// Duplicates counts the messages the idempotent append dropped: an earlier run appended
	// them and stopped before recording its checkpoint.
	Duplicates int64
	// Missing counts the pending entries gone from the stream (deleted or trimmed while
	// pending): there is nothing to import.
	Missing int64
	// Acked counts the entries acked for Group on Stream (SourceAck).
	Acked int64
	// Checkpoint is the hash recording how far imports into Topic got; deleting it makes
	// the next import start over (the idempotency window still drops recent duplicates).
	Checkpoint string
	// LastID is the last source entry id this run went through ("" when none).
	LastID string
}

// ImportRedisstream moves the entries a watermill-redisstream consumer group still holds on
// its stream (opts.Stream, opts.Group) into a streamq topic: first its pending entries
// (delivered, not acked), then those after its last-delivered id up to the stream's newest
// entry when the import started, in stream order. Each keeps its UUID, metadata and payload
// and goes to the partition of its key (opts.KeyMetadata or opts.KeyField), through a
// streamq Publisher with the topic's recorded length retention and the Admin's payload
// offloading, so a key's messages stay in order.
//
// It is idempotent. A checkpoint under the control prefix records, per source stream and
// group, how far imports got: a run again appends nothing it appended before, and picks up
// the entries that arrived since. A run that failed between an append and its checkpoint is
// covered by the Publisher's IdempotencyWindow. One import runs into a topic at a time
// (ErrImportRunning).
//
// A missing source stream or group is ErrGroupNotFound; bad options are ErrInvalidArgument;
// an entry not in watermill-redisstream's default format stops the import with an error
// wrapping streamq.ErrMalformedEntry (the checkpoint keeps what was done). It returns what it
// did also with an error. It is safe for concurrent use; ctx bounds the whole import.
func (a *Admin) ImportRedisstream(ctx context.Context, opts ImportOptions) (ImportResult, error) {
	if err := opts.setDefaults(); err != nil {
		return ImportResult{}, err
	}
	imp, err := a.newImport(ctx, opts)
	if err != nil {
		return ImportResult{}, err
	}
	if opts.DryRun {
		return imp.dryRun(ctx)
	}
	return imp.run(ctx)
}

// setDefaults fills the defaults in and checks the options: ErrInvalidArgument.
func (o *ImportOptions) setDefaults() error {
	o.Topic = orDefault(o.Topic, o.Stream)
	o.TargetGroup = orDefault(o.TargetGroup, o.Group)
	o.Consumer = orDefault(o.Consumer, DefaultImportConsumer)
	o.Source = ImportSource(orDefault(string(o.Source), string(SourceKeep)))
	if o.KeyField == "" {
		o.KeyMetadata = orDefault(o.KeyMetadata, streamq.PartitionKeyMetadata)
	}
	if o.Partitioner == nil {
		o.Partitioner = streamq.HashPartitioner{}
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultImportBatch
	}
	if o.IdempotencyWindow == 0 {
		o.IdempotencyWindow = DefaultImportIdempotencyWindow
	}
	if err := o.validate(); err != nil {
		return fmt.Errorf("import: %w: %w", ErrInvalidArgument, err)
	}
	return nil
}

func (o *ImportOptions) validate() error {
	switch {
	case o.Stream == "" || o.Group == "":
		return errors.New("the source stream and consumer group are required")
	case o.KeyField != "" && o.KeyMetadata != "":
		return errors.New("the partition key comes from metadata or a field, not both")
	case o.Source != SourceKeep && o.Source != SourceAck:
		return fmt.Errorf("source must be %q or %q, got %q", SourceKeep, SourceAck, o.Source)
	case o.Partitions < 0 || o.BatchSize < 1:
		return fmt.Errorf("partitions must not be negative and the batch size at least 1, got %d and %d", o.Partitions, o.BatchSize)
	case o.IdempotencyWindow != -1 && o.IdempotencyWindow < time.Millisecond:
		return fmt.Errorf("the idempotency window must be at least 1ms or -1 (off), got %s", o.IdempotencyWindow)
	}
	if err := checkTopicName(o.Topic); err != nil {
		return err
	}
	for kind, name := range map[string]string{"consumer group": o.TargetGroup, "consumer": o.Consumer} {
		if err := keys.ValidateName(kind, name); err != nil {
			return err
		}
	}
	return nil
}

// newImport reads where the source group stands, the checkpoint and the topic's partition
// count, and checks the count against opts.Partitions.
func (a *Admin) newImport(ctx context.Context, o ImportOptions) (*importRun, error) {
	snap, err := importsrc.Take(ctx, a.rdb, o.Stream, o.Group)
	switch {
	case errors.Is(err, importsrc.ErrNoStream):
		return nil, fmt.Errorf("import: %w: %q: stream %q does not exist", ErrGroupNotFound, o.Group, o.Stream)
	case errors.Is(err, importsrc.ErrNoGroup):
		return nil, fmt.Errorf("import: %w: stream %q has no group %q", ErrGroupNotFound, o.Stream, o.Group)
	case err != nil:
		return nil, err
	}
	imp := &importRun{a: a, o: o, snap: snap, keys: importsrc.KeysFor(a.space.Control, o.Topic)}
	if err := imp.readCheckpoint(ctx); err != nil {
		return nil, err
	}
	if err := imp.readTopic(ctx); err != nil {
		return nil, err
	}
	imp.res = ImportResult{Stream: o.Stream, Group: o.Group, Topic: o.Topic, TargetGroup: o.TargetGroup,
		Source: o.Source, DryRun: o.DryRun, Partitions: imp.partitions, ByPartition: map[int]int64{},
		Checkpoint: imp.keys.Checkpoints}
	return imp, nil
}
