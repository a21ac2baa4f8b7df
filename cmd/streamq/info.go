package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// infoView is "info --json": admin.QueueInfo.
type infoView struct {
	Topic        string              `json:"topic"`
	Partitions   int                 `json:"partitions"`
	Length       int64               `json:"length"`  // published messages held
	Retries      int64               `json:"retries"` // retry entries held besides
	Entries      int64               `json:"entries"` // both: the partitions' XLEN, summed
	FirstID      string              `json:"firstId"` // "" when the topic is empty
	LastID       string              `json:"lastId"`
	Groups       int                 `json:"groups"`
	DLQLength    int64               `json:"dlqLength"`
	Retention    retentionView       `json:"retention"`
	OverMaxLen   int64               `json:"overMaxLen"` // summed over partitions
	PerPartition []partitionInfoView `json:"perPartition"`
	// Memory is the Redis servers' memory and whether the topic's publishes are refused.
	Memory memoryView `json:"memory"`
	// MemoryUse is who holds the memory, while some server is at or above the high-water
	// mark; absent otherwise.
	MemoryUse *memoryUseView `json:"memoryUse,omitempty"`
}

// retentionView is admin.LengthRetention.
type retentionView struct {
	MaxLen   int64  `json:"maxLen"` // -1: length retention is off
	Exact    bool   `json:"exact"`
	Policy   string `json:"policy"`   // "acked" or "hard"
	Recorded bool   `json:"recorded"` // false: no Publisher recorded one, the defaults apply
}

// partitionInfoView is admin.PartitionInfo.
type partitionInfoView struct {
	Partition  int    `json:"partition"`
	Stream     string `json:"stream"`
	Length     int64  `json:"length"`
	Retries    int64  `json:"retries"`
	Entries    int64  `json:"entries"`
	FirstID    string `json:"firstId"`
	LastID     string `json:"lastId"`
	Groups     int    `json:"groups"`
	DLQLength  int64  `json:"dlqLength"`
	OverMaxLen int64  `json:"overMaxLen"`
	// Holder is the group whose position stops the trim, "" when none holds anything;
	// HolderNeeds is the lowest id it still needs and HeldBack how many of the entries over
	// max length it holds back.
	Holder      string `json:"holder"`
	HolderNeeds string `json:"holderNeeds"`
	HeldBack    int64  `json:"heldBack"`
}

func newInfoView(q admin.QueueInfo, m admin.TopicMemory) infoView {
	r := q.Retention
	v := infoView{
		Memory: newMemoryView(m),
		Topic:  q.Topic, Partitions: q.Partitions, Length: q.Length, Retries: q.Retries, Entries: q.Entries, FirstID: q.FirstID, LastID: q.LastID,
		Groups: q.Groups, DLQLength: q.DLQLength, OverMaxLen: q.OverMaxLen, PerPartition: []partitionInfoView{},
		Retention: retentionView{MaxLen: r.MaxLen, Exact: r.Exact, Policy: r.Policy, Recorded: r.Recorded},
	}
	for _, p := range q.PerPartition {
		v.PerPartition = append(v.PerPartition, partitionInfoView{
			Partition: p.Partition, Stream: p.Stream, Length: p.Length, Retries: p.Retries, Entries: p.Entries, FirstID: p.FirstID, LastID: p.LastID,
			Groups: p.Groups, DLQLength: p.DLQLength, OverMaxLen: p.OverMaxLen,
			Holder: p.Holder, HolderNeeds: p.HolderNeeds, HeldBack: p.HeldBack,
		})
	}
	return v
}

func infoCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "info TOPIC",
		Short: "Show a topic's length, retention, first and last ids, groups and DLQ, per partition",
		Long: `Shows a topic and each of its partitions: length (the published messages it holds),
retries (the retry entries it holds besides, which only their group delivers), first and
last ids, consumer groups and dead letters, the length retention its publishers recorded (max length per partition, exact or
approximate trimming, trim policy), and how many entries each partition holds over the max
length with the group holding them: the one whose position stops the trim (its oldest
pending entry, or the entry after its last delivered). "-" there: no group needs what is
over, the next trim removes it. Then the Redis server's used and max memory (each master's
on a Cluster), and "full: publishing refused since …" while Redis refuses publishes to the
topic for memory. At or above the memory high-water mark, a block says who holds the memory:
the group that holds back the most of every topic (on this topic, or "Redis is full because
of group G on topic T"), and what each group of this topic holds back: its unacked messages
and retries with their approximate size (MEMORY USAGE, sampled), its dead letters apart.
-o wide adds the retries and groups of each partition.`,
		Example: `  streamq info orders
  streamq info orders -o wide`,
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.withAdmin(a.info),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// info is "streamq info TOPIC".
func (a *app) info(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	q, err := adm.QueueInfo(ctx, args[0])
	if err != nil {
		return err
	}
	m, err := adm.TopicMemory(ctx, args[0])
	if err != nil {
		return err
	}
	v := newInfoView(q, m)
	if v.MemoryUse, err = memoryUseOf(ctx, adm, args[0], m); err != nil {
		return err
	}
	if a.json {
		return printJSON(a.stdout, v)
	}
	if err := printInfo(a.stdout, v, a.fitWidth(), a.memoryLines(m)); err != nil {
		return err
	}
	return printHeld(a.stdout, a.fitWidth(), args[0], v.MemoryUse, m.Full())
}

// printInfo is info's key-value view, wrapped to width, and its partitions table, cut to
// width; width 0 (-o wide) cuts nothing and shows every column.
func printInfo(w io.Writer, v infoView, width int, memory []memoryLine) error {
	t := newTable(w).fitWrapped(width, 1)
	t.row("topic", v.Topic)
	t.row("partitions", v.Partitions)
	t.row("length", v.Length)
	t.row("retries", v.Retries)
	t.row("first id", orDash(v.FirstID))
	t.row("last id", orDash(v.LastID))
	t.row("groups", v.Groups)
	t.row("dead letters", v.DLQLength)
	t.row("max length", maxLenText(v.Retention))
	t.row("trim", trimText(v.Retention.Exact))
	t.row("trim policy", v.Retention.Policy)
	t.row("over max length", v.OverMaxLen)
	for _, l := range memory {
		t.row(l.name, l.value)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return printPartitions(w, v, width)
}

// printPartitions is info's table of partitions, HELD BY cut to width (0: every column).
func printPartitions(w io.Writer, v infoView, width int) error {
	if width == 0 {
		t := newTable(w, "PARTITION", "LENGTH", "RETRIES", "FIRST ID", "LAST ID", "GROUPS", "DLQ", "OVER MAXLEN", "HELD BY")
		for _, p := range v.PerPartition {
			t.row(p.Partition, p.Length, p.Retries, orDash(p.FirstID), orDash(p.LastID), p.Groups, p.DLQLength, p.OverMaxLen, orDash(p.Holder))
		}
		return t.flush()
	}
	t := newTable(w, "PARTITION", "LENGTH", "FIRST ID", "LAST ID", "DLQ", "OVER", "HELD BY").fit(width, 6)
	for _, p := range v.PerPartition {
		t.row(p.Partition, p.Length, orDash(p.FirstID), orDash(p.LastID), p.DLQLength, p.OverMaxLen, orDash(p.Holder))
	}
	return t.flush()
}

// maxLenText is a topic's max length per partition for a table: "off", or the number with
// "(default)" when no publisher recorded one.
func maxLenText(r retentionView) string {
	switch {
	case r.MaxLen < 0:
		return "off"
	case !r.Recorded:
		return strconv.FormatInt(r.MaxLen, 10) + " (default)"
	}
	return strconv.FormatInt(r.MaxLen, 10)
}

// trimText says how partitions are trimmed to the max length.
func trimText(exact bool) string {
	if exact {
		return "exact"
	}
	return "approximate"
}
