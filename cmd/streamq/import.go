package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// importView is "import --json": admin.ImportResult.
type importView struct {
	Stream      string `json:"stream"`
	Group       string `json:"group"`
	Topic       string `json:"topic"`
	TargetGroup string `json:"targetGroup"`
	Source      string `json:"source"`
	DryRun      bool   `json:"dryRun"`
	Partitions  int    `json:"partitions"`
	Pending     int64  `json:"pending"`
	Undelivered int64  `json:"undelivered"`
	// Imported: appended to the topic (a dry run: would be).
	Imported    int64                 `json:"imported"`
	ByPartition []importPartitionView `json:"byPartition"`
	Skipped     int64                 `json:"skipped"`
	Duplicates  int64                 `json:"duplicates"`
	Missing     int64                 `json:"missing"`
	Acked       int64                 `json:"acked"`
	Checkpoint  string                `json:"checkpoint"`
	LastID      string                `json:"lastId"`
}

// importPartitionView is one partition's count of "import --json".
type importPartitionView struct {
	Partition int   `json:"partition"`
	Imported  int64 `json:"imported"`
}

func newImportView(r admin.ImportResult) importView {
	v := importView{Stream: r.Stream, Group: r.Group, Topic: r.Topic, TargetGroup: r.TargetGroup, Source: string(r.Source),
		DryRun: r.DryRun, Partitions: r.Partitions, Pending: r.Pending, Undelivered: r.Undelivered, Imported: r.Imported,
		ByPartition: []importPartitionView{}, Skipped: r.Skipped, Duplicates: r.Duplicates, Missing: r.Missing,
		Acked: r.Acked, Checkpoint: r.Checkpoint, LastID: r.LastID}
	for p, n := range r.ByPartition {
		v.ByPartition = append(v.ByPartition, importPartitionView{Partition: p, Imported: n})
	}
	sort.Slice(v.ByPartition, func(i, j int) bool { return v.ByPartition[i].Partition < v.ByPartition[j].Partition })
	return v
}

// importOpts are the flags of import.
type importOpts struct {
	a      *app
	opts   admin.ImportOptions
	ack    bool
	window time.Duration
}

const importLong = `Moves what a consumer group of a watermill-redisstream topic still holds into a streamq
topic: its pending entries (delivered, not acked), then the entries after its last-delivered
id, in stream order, each to the partition of its key (metadata --key-metadata, default
"partition_key", or the entry field --key-field), with its UUID, metadata and payload.
STREAM is the watermill-redisstream topic (its stream key); TOPIC defaults to STREAM.

Running it again appends nothing twice: a checkpoint records how far imports got, and the
import's idempotency window covers a run that stopped between an append and its checkpoint.
Entries that arrived since the last run are imported by the next one.

By default the source is left as it was: stop the old subscribers for good first. With
--ack-source the import takes the backlog as a consumer of the group and acks what it moved
(asks for confirmation): old subscribers still running then share what is left with it,
and the group reads as drained afterwards. --dry-run counts what would be imported and
changes nothing: 0 means the group is drained. Shows a progress bar on a terminal.`

// importCmd is "streamq import".
func importCmd(a *app) *cobra.Command {
	o := &importOpts{a: a}
	cmd := &cobra.Command{
		Use:   "import STREAM [TOPIC] --group GROUP",
		Short: "Move a watermill-redisstream group's pending and undelivered entries into a topic",
		Long:  importLong,
		Example: `  streamq import orders --group payments --partitions 8 --dry-run
  streamq import orders --group payments --partitions 8
  streamq import orders orders-v2 --group payments --key-metadata customer_id --ack-source --yes`,
		GroupID: groupData,
		Args:    importArgs,
		RunE:    a.withAdmin(o.run),
	}
	f := cmd.Flags()
	f.StringVarP(&o.opts.Group, "group", "g", "", "consumer group of the stream whose entries move (required)")
	f.IntVar(&o.opts.Partitions, "partitions", 0, "partition count of TOPIC (required when it does not exist)")
	f.StringVar(&o.opts.TargetGroup, "target-group", "", "streamq consumer group the entries are for (default: --group)")
	f.StringVar(&o.opts.KeyMetadata, "key-metadata", "", `metadata key of the partition key (default "partition_key")`)
	f.StringVar(&o.opts.KeyField, "key-field", "", "entry field of the partition key, instead of --key-metadata")
	f.StringVar(&o.opts.SetKeyMetadata, "set-key-metadata", "", "also write the key into this metadata key of each message")
	f.BoolVar(&o.ack, "ack-source", false, "take the entries as a consumer of the group and ack them once imported")
	f.StringVar(&o.opts.Consumer, "consumer", admin.DefaultImportConsumer, "consumer of the group --ack-source takes the entries as")
	f.IntVar(&o.opts.BatchSize, "batch", admin.DefaultImportBatch, "entries read, appended and checkpointed at a time")
	f.DurationVar(&o.window, "idempotency-window", admin.DefaultImportIdempotencyWindow, "idempotency window of the import's appends; 0: off")
	f.BoolVar(&o.opts.DryRun, "dry-run", false, "count what would be imported, change nothing")
	f.IntVar(&a.payloadThreshold, "payload-threshold", 0,
		"an imported payload larger than this many bytes is stored in its own key, as the publishers\n"+
			"store it (default 65536; -1: inline); must match the publishers' Payloads.Threshold")
	f.DurationVar(&a.payloadRetention, "payload-retention", 0,
		"TTL of an imported payload stored in its own key (default none); must match the publishers' Retention")
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// importArgs takes STREAM and an optional TOPIC.
func importArgs(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usageErrorf("missing argument STREAM (expects STREAM [TOPIC])")
	case len(args) > 2:
		return usageErrorf("unexpected argument %q", args[2])
	}
	return nil
}

// run checks the flags, asks for confirmation with --ack-source, imports with a progress bar
// and prints what was done.
func (o *importOpts) run(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	if err := o.options(args); err != nil {
		return err
	}
	if o.ack && !o.opts.DryRun {
		what := fmt.Sprintf("import the backlog of group %q of stream %q into topic %q and ack it for that group",
			o.opts.Group, o.opts.Stream, o.opts.Topic)
		if err := o.a.confirm(ctx, what); err != nil {
			return err
		}
	}
	var bar *progress
	o.opts.Progress = func(p admin.ImportProgress) {
		if bar == nil {
			bar = o.a.startProgress("importing", "entries", p.Total)
		}
		bar.set(p.Done)
	}
	res, err := adm.ImportRedisstream(ctx, o.opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return o.failed(ctx, res, err)
	}
	if o.a.json {
		return printJSON(o.a.stdout, newImportView(res))
	}
	return o.print(res)
}

// options turns the arguments and flags into admin's options.
func (o *importOpts) options(args []string) error {
	o.opts.Stream = args[0]
	if len(args) == 2 {
		o.opts.Topic = args[1]
	}
	if o.opts.Group == "" {
		return usageErrorf("--group is required: the consumer group of %q whose entries move", o.opts.Stream)
	}
	if o.opts.BatchSize < 1 {
		return usageErrorf("--batch must be at least 1, got %d", o.opts.BatchSize)
	}
	if o.window < 0 {
		return usageErrorf("--idempotency-window must not be negative, got %s", o.window)
	}
	o.opts.IdempotencyWindow = o.window
	if o.window == 0 {
		o.opts.IdempotencyWindow = -1
	}
	if o.ack {
		o.opts.Source = admin.SourceAck
	}
	return nil
}

// failed reports an import that stopped: what it did before, and that a run again resumes.
func (o *importOpts) failed(ctx context.Context, res admin.ImportResult, err error) error {
	if res.Imported+res.Skipped+res.Missing+res.Duplicates == 0 {
		return err
	}
	what := "stopped"
	if interrupted(ctx) {
		what = "interrupted"
	}
	return fmt.Errorf("%w (%s after %s; run it again to resume)", err, what, plural(res.Imported, "entry imported", "entries imported"))
}

// print writes the result as text, and a dry run's per-partition counts as a table.
func (o *importOpts) print(r admin.ImportResult) error {
	w := o.a.stdout
	verb := "imported"
	if r.DryRun {
		verb = "dry run: would import"
	}
	fmt.Fprintf(w, "%s %s of stream %q group %q into topic %q (%d partitions) for group %q\n",
		verb, plural(r.Imported, "entry", "entries"), r.Stream, r.Group, r.Topic, r.Partitions, r.TargetGroup)
	fmt.Fprintf(w, "backlog: %d pending, %d undelivered; already imported: %d; duplicates dropped: %d; missing: %d",
		r.Pending, r.Undelivered, r.Skipped, r.Duplicates, r.Missing)
	if r.Source == admin.SourceAck {
		fmt.Fprintf(w, "; acked on the source: %d", r.Acked)
	}
	fmt.Fprintln(w)
	if !r.DryRun {
		fmt.Fprintf(w, "checkpoint: %s (last source id %s)\n", r.Checkpoint, orDash(r.LastID))
	}
	if len(r.ByPartition) == 0 {
		return nil
	}
	t := newTable(w, "PARTITION", "ENTRIES")
	for _, p := range newImportView(r).ByPartition {
		t.row(p.Partition, p.Imported)
	}
	return t.flush()
}
