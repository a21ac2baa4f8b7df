package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// entryView is one stream entry in JSON ("recent", "range", "tail"): admin.Entry.
type entryView struct {
	Topic     string            `json:"topic"`
	Partition int               `json:"partition"`
	ID        string            `json:"id"`
	Time      jsonTime          `json:"time"` // the id's time
	UUID      string            `json:"uuid"`
	Metadata  map[string]string `json:"metadata"`
	// Payload is the inline payload ("" when offloaded: it lives in its own key).
	Payload         string            `json:"payload"`
	PayloadEncoding string            `json:"payloadEncoding"` // "utf8" or "base64"
	PayloadSize     int               `json:"payloadSize"`
	Offloaded       bool              `json:"offloaded"`
	Fields          map[string]string `json:"fields"`    // fields besides uuid, metadata, payload
	Malformed       string            `json:"malformed"` // why the entry is not in streamq's format
}

func newEntryView(e admin.Entry) entryView {
	payload, enc := payloadText(e.Payload)
	return entryView{
		Topic: e.Topic, Partition: e.Partition, ID: e.ID, Time: jsonTime(e.Time), UUID: e.UUID,
		Metadata: nonNilMap(e.Metadata), Payload: payload, PayloadEncoding: enc, PayloadSize: e.PayloadSize,
		Offloaded: e.Offloaded, Fields: nonNilMap(e.Fields), Malformed: e.Malformed,
	}
}

// entryTable starts an entry table: partition, id, time and payload, cut to fit 80 columns;
// with -o wide also the UUID and metadata. entryRow fills one row.
func (a *app) entryTable(w io.Writer) *table {
	if a.wide {
		return newTable(w, "PARTITION", "ID", "TIME", "UUID", "METADATA", "PAYLOAD")
	}
	return newTable(w, "PART", "ID", "TIME", "PAYLOAD").fit(a.width(), 3)
}

func (a *app) entryRow(e admin.Entry) []any {
	payload := payloadPreview(e.Payload)
	switch {
	case e.Offloaded:
		payload = fmt.Sprintf("(offloaded, %d bytes)", e.PayloadSize)
	case e.Malformed != "":
		payload = "(malformed: " + truncate(e.Malformed, previewLen) + ")"
	}
	if a.wide {
		return []any{e.Partition, e.ID, a.timeText(e.Time), orDash(e.UUID), metadataPreview(e.Metadata), payload}
	}
	return []any{e.Partition, e.ID, a.timeText(e.Time), payload}
}

// printEntries prints entries as a table or a JSON array.
func (a *app) printEntries(w io.Writer, entries []admin.Entry, empty string) error {
	if a.json {
		views := []entryView{}
		for _, e := range entries {
			views = append(views, newEntryView(e))
		}
		return printJSON(w, views)
	}
	if len(entries) == 0 {
		fmt.Fprintln(w, empty)
		return nil
	}
	t := a.entryTable(w)
	for _, e := range entries {
		t.row(a.entryRow(e)...)
	}
	return t.flush()
}

func recentCmd(a *app) *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:               "recent TOPIC",
		Example:           "  streamq recent orders\n  streamq recent orders -n 5 -o wide --utc",
		Short:             "Show a topic's newest entries across partitions, newest first",
		GroupID:           groupData,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usageErrorf("-n must be at least 1, got %d", n)
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			entries, err := adm.ListRecent(ctx, args[0], n)
			if err != nil {
				return err
			}
			return a.printEntries(a.stdout, entries, fmt.Sprintf("topic %q is empty", args[0]))
		}),
	}
	cmd.Flags().IntVarP(&n, "count", "n", 20, "how many entries")
	a.addJSONFlag(cmd)
	return cmd
}

func rangeCmd(a *app) *cobra.Command {
	var (
		start, end string
		count      int64
		reverse    bool
	)
	cmd := &cobra.Command{
		Use:   "range TOPIC PARTITION",
		Short: "Read a partition's entries between two ids",
		Long: `Reads up to --count entries of one partition between --start and --end inclusive, oldest
first (newest first with --reverse). Ids are stream ids ("1700000000000-0", or just the
milliseconds); "-" and "+" are the ends of the stream, "(" before an id excludes it.`,
		Example: `  streamq range orders 3 --start 1700000000000 --count 10
  streamq range orders 3 --reverse --count 5`,
		GroupID:           groupData,
		Args:              argsExactly("TOPIC", "PARTITION"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			p, err := parsePartition(args[1])
			if err != nil {
				return err
			}
			if count < 1 {
				return usageErrorf("--count must be at least 1, got %d", count)
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			read := adm.Range
			if reverse {
				read = adm.RevRange
			}
			entries, err := read(ctx, args[0], p, start, end, count)
			if err != nil {
				return err
			}
			return a.printEntries(a.stdout, entries, fmt.Sprintf("no entries in partition %d of %q between %s and %s", p, args[0], start, end))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&start, "start", "-", "first id (inclusive; \"(id\" excludes it)")
	f.StringVar(&end, "end", "+", "last id (inclusive; \"(id\" excludes it)")
	f.Int64VarP(&count, "count", "n", admin.DefaultListLimit, "most entries to read")
	f.BoolVar(&reverse, "reverse", false, "newest first")
	a.addJSONFlag(cmd)
	return cmd
}
