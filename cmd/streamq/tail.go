package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// tailBlock is how long one XREAD waits; it bounds how late Ctrl-C is noticed.
const tailBlock = time.Second

// tailBatch is the COUNT of one XREAD per stream.
const tailBatch = 100

// tailLong is the long help of tail.
const tailLong = `Prints the topic's entries as they are appended, across all partitions: partition, id,
time, message UUID, metadata and a payload preview (the whole payload with --json, one JSON
object per line). It reads with plain XREAD BLOCK, not as a consumer group, so consumers are
never disturbed. On a Redis Cluster each partition is read by its own XREAD.

--from picks the start: latest (default: only entries appended from now on), beginning,
a stream id (entries after it), an RFC 3339 time or @unix-milliseconds (entries at or
after it). Stop with Ctrl-C (exit code 0) or after --count entries. Partitions added while
tail runs are not followed.`

// tailOpts are the flags of tail.
type tailOpts struct {
	a     *app
	from  string
	count int
}

// tailCmd is "streamq tail".
func tailCmd(a *app) *cobra.Command {
	o := &tailOpts{a: a}
	cmd := &cobra.Command{
		Use:   "tail TOPIC",
		Short: "Follow a topic's new entries live, across all partitions",
		Long:  tailLong,
		Example: `  streamq tail orders
  streamq tail orders --from 2024-05-01T12:00:00Z --json | jq .payload`,
		GroupID:           groupData,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.runE(o.run),
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "latest", "start: latest, beginning, a stream id, an RFC 3339 time or @unix-ms")
	f.IntVarP(&o.count, "count", "n", 0, "stop after this many entries (0: run until Ctrl-C)")
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions([]cobra.Completion{"latest", "beginning"}, cobra.ShellCompDirectiveNoFileComp))
	a.addJSONFlag(cmd)
	return cmd
}

// run runs tail: it checks the flags, finds the topic's partitions and follows them until
// Ctrl-C (exit code 0), an error or --count entries.
func (o *tailOpts) run(cmd *cobra.Command, args []string) error {
	if o.count < 0 {
		return usageErrorf("--count must not be negative, got %d", o.count)
	}
	start, err := tailStart(o.from)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	adm, err := o.a.admin(ctx)
	if err != nil {
		return err
	}
	q, err := adm.QueueInfo(ctx, args[0])
	if err != nil {
		return err
	}
	t := o.newTailer(args[0], q, start)
	fmt.Fprintf(o.a.stderr, "tailing topic %q (%d partitions) from %s; Ctrl-C to stop\n", t.topic, len(t.streams), o.from)
	err = t.run(ctx)
	if err != nil && ctx.Err() != nil && interrupted(ctx) {
		return nil // Ctrl-C is how tail stops
	}
	return err
}

// newTailer returns the tailer of topic's partitions (q), each starting after start; "$"
// (latest) is resolved to each partition's last id.
func (o *tailOpts) newTailer(topic string, q admin.QueueInfo, start string) *tailer {
	t := &tailer{a: o.a, topic: topic, limit: o.count, client: o.a.conn.client}
	for _, p := range q.PerPartition {
		id := start
		if start == "$" { // resolve now, so nothing appended between two reads is missed
			id = p.LastID
			if id == "" {
				id = "0-0"
			}
		}
		t.streams = append(t.streams, p.Stream)
		t.ids = append(t.ids, id)
	}
	return t
}

// tailStart turns --from into the id XREAD starts after ("$" for latest, resolved per
// partition by the caller). It accepts what admin.ParseOffset accepts.
func tailStart(from string) (string, error) {
	off, err := admin.ParseOffset(from)
	if err != nil {
		return "", &usageError{err: fmt.Errorf("--from: %w", err)}
	}
	s := off.String()
	switch s {
	case "beginning":
		return "0-0", nil
	case "latest":
		return "$", nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		// Entries at or after t: start after the greatest id before t's millisecond.
		if ms := t.UnixMilli(); ms > 0 {
			return strconv.FormatInt(ms-1, 10) + "-18446744073709551615", nil
		}
		return "0-0", nil
	}
	return s, nil // a stream id
}

// tailer follows the partition streams of one topic.
type tailer struct {
	a       *app
	client  redis.UniversalClient
	topic   string
	streams []string // partition p's stream at index p
	ids     []string // last id seen per partition
	limit   int      // stop after this many entries; 0: never
	printed int
}

// errTailDone stops the readers once --count entries were printed.
var errTailDone = errors.New("tail: count reached")

// run reads until ctx ends, an error, or the limit.
func (t *tailer) run(ctx context.Context) error {
	var err error
	if _, cluster := t.client.(*redis.ClusterClient); cluster {
		err = t.runPerPartition(ctx)
	} else {
		err = t.runAll(ctx)
	}
	if errors.Is(err, errTailDone) {
		return nil
	}
	return err
}

// runAll reads every partition with one XREAD (a single node: no slot constraint).
func (t *tailer) runAll(ctx context.Context) error {
	for {
		res, err := t.client.XRead(ctx, &redis.XReadArgs{
			Streams: append(append([]string{}, t.streams...), t.ids...), Count: tailBatch, Block: tailBlock,
		}).Result()
		if err := readErr(ctx, err); err != nil {
			return err
		}
		var batch []admin.Entry
		for _, s := range res {
			p := slices.Index(t.streams, s.Stream)
			if p < 0 || len(s.Messages) == 0 {
				continue
			}
			t.ids[p] = s.Messages[len(s.Messages)-1].ID
			for _, m := range s.Messages {
				batch = append(batch, admin.DecodeEntry(t.topic, p, m))
			}
		}
		sort.SliceStable(batch, func(i, j int) bool { return streamid.Less(batch[i].ID, batch[j].ID) })
		if err := t.print(batch); err != nil {
			return err
		}
	}
}

// runPerPartition reads each partition with its own XREAD (a Cluster: every partition's
// stream is in its own slot), printing from one goroutine.
func (t *tailer) runPerPartition(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	entries := make(chan []admin.Entry)
	var wg sync.WaitGroup
	for p := range t.streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(t.readPartition(ctx, p, entries))
		}()
	}
	go func() { wg.Wait(); close(entries) }()
	for batch := range entries {
		if err := t.print(batch); err != nil {
			cancel(err)
			break
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func (t *tailer) readPartition(ctx context.Context, p int, out chan<- []admin.Entry) error {
	id := t.ids[p]
	for {
		res, err := t.client.XRead(ctx, &redis.XReadArgs{
			Streams: []string{t.streams[p], id}, Count: tailBatch, Block: tailBlock,
		}).Result()
		if err := readErr(ctx, err); err != nil {
			return err
		}
		var batch []admin.Entry
		for _, s := range res {
			for _, m := range s.Messages {
				batch = append(batch, admin.DecodeEntry(t.topic, p, m))
				id = m.ID
			}
		}
		if len(batch) == 0 {
			continue
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readErr filters an XREAD error: a timeout with nothing new (redis.Nil) is not one; after
// ctx ended the context's error is returned.
func readErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("read topic: %w", err)
}

// line is one entry as tail prints it: partition, id, time and payload cut to fit 80
// columns; with -o wide the UUID and metadata too, nothing cut.
func (t *tailer) line(e admin.Entry) string {
	cells := t.a.entryRow(e)
	if t.a.wide {
		return fmt.Sprintf("p%-3v %-21v %v  %v  %v  %v", cells[0], cells[1], cells[2], cells[3], cells[4], cells[5])
	}
	head := fmt.Sprintf("p%-3v %-21v %v  ", cells[0], cells[1], cells[2])
	return head + truncate(fmt.Sprint(cells[3]), max(t.a.width()-utf8.RuneCountInString(head), minFlex))
}

// print writes a batch, returning errTailDone once the limit is reached.
func (t *tailer) print(batch []admin.Entry) error {
	for _, e := range batch {
		if t.a.json {
			if err := printJSONLine(t.a.stdout, newEntryView(e)); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(t.a.stdout, t.line(e))
		}
		t.printed++
		if t.limit > 0 && t.printed >= t.limit {
			return errTailDone
		}
	}
	return nil
}
