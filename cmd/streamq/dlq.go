package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// deadLetterView is one dead letter in JSON: admin.DeadLetter.
type deadLetterView struct {
	Topic             string            `json:"topic"`
	Partition         int               `json:"partition"`
	ID                string            `json:"id"` // the DLQ entry's id
	UUID              string            `json:"uuid"`
	Payload           string            `json:"payload"`
	PayloadEncoding   string            `json:"payloadEncoding"` // "utf8" or "base64"
	Metadata          map[string]string `json:"metadata"`
	Reason            string            `json:"reason"`
	Group             string            `json:"group"`
	RetryCount        int               `json:"retryCount"`
	MaxRetries        int               `json:"maxRetries"`
	OriginalMessageID string            `json:"originalMessageId"`
	OriginalStreamID  string            `json:"originalStreamId"`
	Timestamp         jsonTime          `json:"timestamp"`
	FailedAt          jsonTime          `json:"failedAt"`
	Raw               string            `json:"raw"`        // JSON fields of an undecodable entry
	ReplayedAt        *jsonTime         `json:"replayedAt"` // the latest replay; null when never replayed
	ReplayedAs        string            `json:"replayedAs,omitempty"`
}

func newDeadLetterView(d admin.DeadLetter) deadLetterView {
	payload, enc := payloadText(d.Payload)
	return deadLetterView{
		Topic: d.Topic, Partition: d.Partition, ID: d.ID, UUID: d.UUID, Payload: payload, PayloadEncoding: enc,
		Metadata: nonNilMap(d.Metadata), Reason: d.Reason, Group: d.Group, RetryCount: d.RetryCount,
		MaxRetries: d.MaxRetries, OriginalMessageID: d.OriginalMessageID, OriginalStreamID: d.OriginalStreamID,
		Timestamp: jsonTime(d.Timestamp), FailedAt: jsonTime(d.FailedAt), Raw: d.Raw,
		ReplayedAt: replayedAt(d.ReplayedAt), ReplayedAs: d.ReplayedAs,
	}
}

// replayedAt is a replay mark's time, nil for none.
func replayedAt(t time.Time) *jsonTime {
	if t.IsZero() {
		return nil
	}
	j := jsonTime(t)
	return &j
}

func dlqCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "dlq",
		Example: "  streamq dlq list orders\n  streamq dlq replay-all orders --group payments --dry-run",
		Short:   "Inspect, replay and clear dead-letter queues",
		Long: `Each partition of a topic has a dead-letter queue: messages that failed all their
retries, or were dead-lettered at once. These commands list, replay (append back to the
original partition) and delete them.`,
		GroupID: groupDLQ,
		RunE:    a.parentRunE,
	}
	a.addPayloadFlags(cmd.PersistentFlags())
	cmd.AddCommand(dlqListCmd(a), dlqTopicsCmd(a), dlqSizeCmd(a), dlqShowCmd(a), dlqAddCmd(a),
		dlqReplayCmd(a), dlqReplayAllCmd(a), dlqDeleteCmd(a), dlqClearCmd(a))
	return cmd
}

// dlqListOpts are the flags of dlq list.
type dlqListOpts struct {
	a           *app
	limit       int
	oldestFirst bool
	countBy     string // --count-by: count by this key instead of listing
	filter      dlqFilter
}

func dlqListCmd(a *app) *cobra.Command {
	o := &dlqListOpts{a: a}
	cmd := &cobra.Command{
		Use:   "list TOPIC",
		Short: "List a topic's dead letters, newest first",
		Long: `Lists up to --limit dead letters of the topic with their whole reason and the mark of
their latest replay: the newest first over every partition (the dashboard's order), or with
--oldest-first the oldest failures first. The filters are those of "dlq replay-all", so
--oldest-first with the same filters shows what a replay-all --again would replay.

With --count-by reason (or group, partition) it counts the dead letters that pass the
filters instead, largest first, with the newest failure of each: 882 letters of 5 reasons
are 5 lines. Without a terminal the table keeps an 80-column layout; -o wide shows every
column, -o json the whole.`,
		Example: `  streamq dlq list orders --group payments --reason-contains timeout --failed-within 1h
  streamq dlq list orders --count-by reason
  streamq dlq list orders --count-by group --failed-within 1d -o json`,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.runE(o.run),
	}
	cmd.Flags().IntVarP(&o.limit, "limit", "n", 100, "most dead letters to list")
	cmd.Flags().BoolVar(&o.oldestFirst, "oldest-first", false, "list the oldest failures first (the order replay-all takes)")
	o.addCountFlag(cmd)
	o.filter.addFlags(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// run runs dlq list.
func (o *dlqListOpts) run(cmd *cobra.Command, args []string) error {
	if o.limit < 1 {
		return usageErrorf("--limit must be at least 1, got %d", o.limit)
	}
	if err := o.filter.check(); err != nil {
		return err
	}
	ctx := cmd.Context()
	adm, err := o.a.admin(ctx)
	if err != nil {
		return err
	}
	if o.countBy != "" {
		return o.count(ctx, adm, args[0])
	}
	dead, err := o.read(ctx, adm, args[0])
	if err != nil {
		return err
	}
	if err := o.print(args[0], dead); err != nil {
		return err
	}
	return o.hintCount(ctx, adm, args[0], len(dead))
}

// hintCount says on stderr, when --limit cut the list, how many letters there are and how to
// count them all.
func (o *dlqListOpts) hintCount(ctx context.Context, adm *admin.Admin, topic string, shown int) error {
	if o.a.json || shown < o.limit {
		return nil
	}
	size, err := adm.DLQSize(ctx, topic)
	if err != nil || size <= int64(shown) {
		return err
	}
	fmt.Fprintf(o.a.stderr, "%d of the %d dead letters of %q shown (--limit); \"streamq dlq list %s --count-by reason\" counts them all by reason\n",
		shown, size, topic, topic)
	return nil
}

// read lists the letters: newest first, or with --oldest-first the oldest failures (with a
// filter the first ones of each partition that pass it: the scan replay-all makes, replaying
// nothing), oldest failure first.
func (o *dlqListOpts) read(ctx context.Context, adm *admin.Admin, topic string) ([]admin.DeadLetter, error) {
	if !o.oldestFirst {
		return o.newest(ctx, adm, topic)
	}
	if !o.filter.set() {
		return adm.DLQEntries(ctx, topic, o.limit)
	}
	now, dead := time.Now(), []admin.DeadLetter{}
	keep := func(d admin.DeadLetter) bool {
		ok := o.filter.match(d, now)
		if ok {
			dead = append(dead, d)
		}
		return ok
	}
	if _, err := adm.ReplayAll(ctx, topic, o.limit, keep, admin.ReplayOptions{DryRun: true, Again: true}); err != nil {
		return nil, err
	}
	sort.SliceStable(dead, func(i, j int) bool { return dead[i].FailedAt.Before(dead[j].FailedAt) })
	return dead, nil
}

// newest pages through the topic's dead letters newest first (admin.FindDeadLetters, as the
// dashboard does), keeping those the filter passes, up to the limit.
func (o *dlqListOpts) newest(ctx context.Context, adm *admin.Admin, topic string) ([]admin.DeadLetter, error) {
	now, f := time.Now(), o.filter
	q := admin.DLQQuery{Group: f.group, Reason: f.reasonContains, Limit: min(o.limit, admin.MaxPageLimit)}
	if f.partition >= 0 {
		q.Partitions = []int{f.partition}
	}
	if f.failedWithin > 0 {
		q.Since = now.Add(-f.failedWithin)
	}
	if f.failedBefore > 0 {
		q.Until = now.Add(-f.failedBefore)
	}
	dead := []admin.DeadLetter{}
	for len(dead) < o.limit {
		page, err := adm.FindDeadLetters(ctx, topic, q)
		if err != nil {
			return nil, err
		}
		for _, d := range page.Letters {
			if len(dead) < o.limit && f.match(d, now) { // the reason's case, as replay-all
				dead = append(dead, d)
			}
		}
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	return dead, nil
}

// print writes the letters as a table or JSON.
func (o *dlqListOpts) print(topic string, dead []admin.DeadLetter) error {
	if o.a.json {
		views := []deadLetterView{}
		for _, d := range dead {
			views = append(views, newDeadLetterView(d))
		}
		return printJSON(o.a.stdout, views)
	}
	if len(dead) == 0 {
		fmt.Fprintf(o.a.stdout, "topic %q has no dead letters%s\n", topic, o.filter.text())
		return nil
	}
	if o.a.wide {
		t := newTable(o.a.stdout, "PARTITION", "ID", "FAILED AT", "GROUP", "RETRIES", "REPLAYED", "REASON", "PAYLOAD")
		for _, d := range dead {
			t.row(d.Partition, d.ID, o.a.timeText(d.FailedAt), orDash(d.Group), d.RetryCount, o.a.replayedText(d),
				orDash(d.Reason), payloadPreview(d.Payload))
		}
		return t.flush()
	}
	t := newTable(o.a.stdout, "PART", "ID", "FAILED AT", "GROUP", "REASON").fitWrapped(o.a.width(), 4)
	group := nameWidth(o.a.width())
	for _, d := range dead {
		t.row(d.Partition, d.ID, o.a.timeText(d.FailedAt), truncate(orDash(d.Group), group), orDash(replayMark(d)+d.Reason))
	}
	return t.flush()
}

// dlqSizeView is one topic of "dlq topics --json" and the result of "dlq size --json".
type dlqSizeView struct {
	Topic string `json:"topic"`
	Size  int64  `json:"size"`
}

func dlqTopicsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "topics",
		Example: "  streamq dlq topics",
		Short:   "List the topics that have dead letters, with their DLQ size",
		Args:    argsExactly(),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			topics, err := adm.DLQTopics(ctx)
			if err != nil {
				return err
			}
			views := []dlqSizeView{}
			for _, topic := range topics {
				n, err := adm.DLQSize(ctx, topic)
				if err != nil {
					return err
				}
				views = append(views, dlqSizeView{Topic: topic, Size: n})
			}
			if a.json {
				return printJSON(a.stdout, views)
			}
			if len(views) == 0 {
				fmt.Fprintln(a.stdout, "no topic has dead letters")
				return nil
			}
			t := newTable(a.stdout, "TOPIC", "DEAD LETTERS").fit(a.fitWidth(), 0)
			for _, v := range views {
				t.row(v.Topic, v.Size)
			}
			return t.flush()
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

func dlqSizeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "size TOPIC",
		Example:           "  streamq dlq size orders\n  [ \"$(streamq dlq size orders)\" -eq 0 ] || echo \"orders has dead letters\"",
		Short:             "Print how many dead letters a topic has, over all partitions",
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
			n, err := adm.DLQSize(ctx, args[0])
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, dlqSizeView{Topic: args[0], Size: n})
			}
			fmt.Fprintln(a.stdout, n)
			return nil
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

func dlqShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "show TOPIC PARTITION ID",
		Example:           "  streamq dlq show orders 3 1718000000000-0\n  streamq dlq show orders 3 1718000000000-0 -o json | jq -r .payload",
		Short:             "Show one dead letter with its whole payload",
		Args:              argsExactly("TOPIC", "PARTITION", "ID"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			p, err := parsePartition(args[1])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			d, err := adm.DLQEntry(ctx, args[0], p, args[2])
			if err != nil {
				return err
			}
			v := newDeadLetterView(d)
			if a.json {
				return printJSON(a.stdout, v)
			}
			t := newTable(a.stdout).fitWrapped(a.width(), 1)
			t.row("topic", v.Topic)
			t.row("partition", v.Partition)
			t.row("id", v.ID)
			t.row("uuid", orDash(v.UUID))
			t.row("reason", orDash(v.Reason))
			t.row("group", orDash(v.Group))
			t.row("retries", fmt.Sprintf("%d of %d", v.RetryCount, v.MaxRetries))
			t.row("original message id", orDash(v.OriginalMessageID))
			t.row("original stream id", orDash(v.OriginalStreamID))
			t.row("published", a.timeText(d.Timestamp))
			t.row("failed at", a.timeText(d.FailedAt))
			t.row("metadata", metadataPreview(v.Metadata))
			if v.Raw != "" {
				t.row("raw", v.Raw)
			}
			t.row("payload encoding", v.PayloadEncoding)
			if err := t.flush(); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "payload:\n%s\n", v.Payload)
			return nil
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// replayView is "dlq replay --json".
type replayView struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	ID        string `json:"id"`    // the dead letter's id
	NewID     string `json:"newId"` // the id of the entry appended to the partition ("": none)
	Deleted   bool   `json:"deleted"`
	// Replayed is false when the letter was replayed before and nothing was done (no
	// --again): AlreadyReplayedAt and AlreadyReplayedAs tell that earlier replay.
	Replayed          bool      `json:"replayed"`
	AlreadyReplayedAt *jsonTime `json:"alreadyReplayedAt,omitempty"`
	AlreadyReplayedAs string    `json:"alreadyReplayedAs,omitempty"`
}

func dlqReplayCmd(a *app) *cobra.Command {
	var del, allGroups, again bool
	cmd := &cobra.Command{
		Use:     "replay TOPIC PARTITION ID",
		Example: "  streamq dlq replay orders 3 1718000000000-0\n  streamq dlq replay orders 3 1718000000000-0 --delete --all-groups",
		Short:   "Append one dead letter back to its partition",
		Long: `Appends the dead letter back to its original partition (retry count reset). Only the
consumer group that failed it gets it again, like a retry (the groups that handled the
message skip it), unless --all-groups is given. The dead letter stays in the DLQ, marked as
replayed, unless --delete is given.

A dead letter replayed before (kept, marked) is not replayed again: the command says when
and as which entry it was, and exits 0 having done nothing; --again replays it again. Two
replays of one letter at once replay it once.`,
		Args:              argsExactly("TOPIC", "PARTITION", "ID"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			p, err := parsePartition(args[1])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			newID, err := adm.ReplayDeadLetter(ctx, args[0], p, args[2], admin.ReplayOptions{Delete: del, AllGroups: allGroups, Again: again})
			var already *admin.AlreadyReplayedError
			if errors.As(err, &already) {
				return a.printAlreadyReplayed(already)
			}
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, replayView{Topic: args[0], Partition: p, ID: args[2], NewID: newID, Deleted: del, Replayed: true})
			}
			kept := "kept in the DLQ"
			if del {
				kept = "deleted from the DLQ"
			}
			fmt.Fprintf(a.stdout, "replayed dead letter %s to partition %d of %q as %s (%s)\n", args[2], p, args[0], newID, kept)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&del, "delete", false, "delete the dead letter once replayed")
	cmd.Flags().BoolVar(&allGroups, "all-groups", false, "deliver the replay to every consumer group, not only the one that failed it")
	cmd.Flags().BoolVar(&again, "again", false, "replay it even if it was replayed before")
	a.addJSONFlag(cmd)
	return cmd
}

// printAlreadyReplayed says that dlq replay did nothing: the letter was replayed before.
func (a *app) printAlreadyReplayed(e *admin.AlreadyReplayedError) error {
	if a.json {
		return printJSON(a.stdout, replayView{Topic: e.Topic, Partition: e.Partition, ID: e.ID,
			AlreadyReplayedAt: replayedAt(e.ReplayedAt), AlreadyReplayedAs: e.ReplayedAs})
	}
	fmt.Fprintf(a.stdout, "dead letter %s of %q partition %d was already replayed at %s as %s: nothing replayed (--again replays it again)\n",
		e.ID, e.Topic, e.Partition, a.timeText(e.ReplayedAt), e.ReplayedAs)
	return nil
}

// replayAllView is "dlq replay-all --json".
type replayAllView struct {
	Topic    string `json:"topic"`
	Replayed int    `json:"replayed"`
	Deleted  bool   `json:"deleted"`
	DryRun   bool   `json:"dryRun"`
	// Letters are what a dry run would replay (none without --dry-run).
	Letters []deadLetterView `json:"letters,omitempty"`
}

// replayAllOpts are the flags of dlq replay-all.
type replayAllOpts struct {
	a         *app
	limit     int
	filter    dlqFilter
	del       bool
	allGroups bool
	again     bool
	dryRun    bool
	would     []admin.DeadLetter // what a dry run would replay
}

// dlqReplayAllCmd is "streamq dlq replay-all".
func dlqReplayAllCmd(a *app) *cobra.Command {
	o := &replayAllOpts{a: a}
	cmd := &cobra.Command{
		Use:   "replay-all TOPIC",
		Short: "Append many dead letters back to their partitions",
		Long: `Replays up to --limit dead letters of the topic, oldest first per partition, optionally
only those whose reason contains a string or that failed in one consumer group. Each goes to
the group that failed it only (--all-groups: to every group). Letters replayed before are
skipped, so running it twice replays each once (--again replays them again). --dry-run lists
what would be replayed and changes nothing. With --delete the replayed dead letters are
removed from the DLQ (asks for confirmation). Shows a progress bar on a terminal.`,
		Example: `  streamq dlq replay-all orders --group payments --reason-contains timeout --dry-run
  streamq dlq replay-all orders --group payments --reason-contains timeout
  streamq dlq replay-all orders --delete --yes`,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.runE(o.run),
	}
	f := cmd.Flags()
	f.IntVarP(&o.limit, "limit", "n", admin.DefaultReplayLimit, "most dead letters to replay")
	f.BoolVar(&o.del, "delete", false, "delete the dead letters once replayed")
	f.BoolVar(&o.allGroups, "all-groups", false, "deliver each replay to every consumer group, not only the one that failed it")
	f.BoolVar(&o.again, "again", false, "also replay dead letters replayed before")
	f.BoolVar(&o.dryRun, "dry-run", false, "list what would be replayed, replay nothing")
	o.filter.addFlags(cmd)
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// run runs dlq replay-all: it checks --limit, asks for confirmation with --delete, replays
// the dead letters that pass the filters with a progress bar and prints how many.
func (o *replayAllOpts) run(cmd *cobra.Command, args []string) error {
	if o.limit < 1 {
		return usageErrorf("--limit must be at least 1, got %d", o.limit)
	}
	if err := o.filter.check(); err != nil {
		return err
	}
	topic := args[0]
	ctx := cmd.Context()
	adm, err := o.a.admin(ctx)
	if err != nil {
		return err
	}
	size, err := adm.DLQSize(ctx, topic)
	if err != nil {
		return err
	}
	if o.del && !o.dryRun {
		what := fmt.Sprintf("replay up to %d of the %s of topic %q%s and delete them from the DLQ",
			o.limit, plural(size, "dead letter", "dead letters"), topic, o.filter.text())
		if err := o.a.confirm(ctx, what); err != nil {
			return err
		}
	}
	bar := o.a.startProgress("replaying", "dead letters", min(size, int64(o.limit)))
	n, err := adm.ReplayAll(ctx, topic, o.limit, o.keep(bar),
		admin.ReplayOptions{Delete: o.del, AllGroups: o.allGroups, Again: o.again, DryRun: o.dryRun})
	bar.done()
	if err != nil {
		return fmt.Errorf("%w (%s replayed before the error)", err, plural(int64(n), "dead letter was", "dead letters were"))
	}
	if o.dryRun {
		return o.printDryRun(topic, n)
	}
	if o.a.json {
		return printJSON(o.a.stdout, replayAllView{Topic: topic, Replayed: n, Deleted: o.del})
	}
	fmt.Fprintf(o.a.stdout, "replayed %s of topic %q\n", plural(int64(n), "dead letter", "dead letters"), topic)
	return nil
}

// printDryRun lists the n dead letters replay-all would replay.
func (o *replayAllOpts) printDryRun(topic string, n int) error {
	if o.a.json {
		v := replayAllView{Topic: topic, DryRun: true, Letters: []deadLetterView{}}
		for _, d := range o.would[:n] {
			v.Letters = append(v.Letters, newDeadLetterView(d))
		}
		return printJSON(o.a.stdout, v)
	}
	fmt.Fprintf(o.a.stdout, "would replay %s of topic %q (dry run)\n", plural(int64(n), "dead letter", "dead letters"),
		proseName(topic, o.a.fitWidth()))
	if n == 0 {
		return nil
	}
	if o.a.wide {
		t := newTable(o.a.stdout, "PARTITION", "ID", "FAILED AT", "GROUP", "REPLAYED", "REASON")
		for _, d := range o.would[:n] {
			t.row(d.Partition, d.ID, o.a.timeText(d.FailedAt), orDash(d.Group), o.a.replayedText(d), orDash(truncate(d.Reason, previewLen)))
		}
		return t.flush()
	}
	t := newTable(o.a.stdout, "PART", "ID", "FAILED AT", "GROUP", "REASON").fitWrapped(o.a.width(), 4)
	group := nameWidth(o.a.width())
	for _, d := range o.would[:n] {
		t.row(d.Partition, d.ID, o.a.timeText(d.FailedAt), truncate(orDash(d.Group), group), orDash(replayMark(d)+d.Reason))
	}
	return t.flush()
}

// replayMark prefixes the reason of a dead letter replayed before in a narrow table.
func replayMark(d admin.DeadLetter) string {
	if d.ReplayedAt.IsZero() {
		return ""
	}
	return "(replayed) "
}

// replayedText is a dead letter's replay mark in a table: when, or "-".
func (a *app) replayedText(d admin.DeadLetter) string {
	if d.ReplayedAt.IsZero() {
		return "-"
	}
	return a.timeText(d.ReplayedAt)
}

// keep is the filter (--group, --reason-contains, --partition, --failed-within,
// --failed-before); it advances bar for every dead letter it keeps.
func (o *replayAllOpts) keep(bar *progress) func(admin.DeadLetter) bool {
	now := time.Now()
	return func(d admin.DeadLetter) bool {
		ok := o.filter.match(d, now)
		if ok {
			bar.add(1)
			if o.dryRun && len(o.would) < o.limit {
				o.would = append(o.would, d)
			}
		}
		return ok
	}
}

// dlqDeleteView is "dlq delete --json".
type dlqDeleteView struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	ID        string `json:"id"`
	Deleted   bool   `json:"deleted"`
}

func dlqDeleteCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "delete TOPIC PARTITION ID",
		Example:           "  streamq dlq delete orders 3 1718000000000-0 --yes",
		Short:             "Delete one dead letter",
		Args:              argsExactly("TOPIC", "PARTITION", "ID"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			topic, id := args[0], args[2]
			p, err := parsePartition(args[1])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			if _, err := adm.DLQEntry(ctx, topic, p, id); err != nil {
				return err
			}
			if err := a.confirm(ctx, fmt.Sprintf("delete dead letter %s of topic %q partition %d", id, topic, p)); err != nil {
				return err
			}
			ok, err := adm.DeleteDeadLetter(ctx, topic, p, id)
			if err != nil {
				return err
			}
			if !ok {
				return &notFoundError{msg: fmt.Sprintf("dead letter %s of %q partition %d not found", id, topic, p)}
			}
			if a.json {
				return printJSON(a.stdout, dlqDeleteView{Topic: topic, Partition: p, ID: id, Deleted: true})
			}
			fmt.Fprintf(a.stdout, "deleted dead letter %s of topic %q partition %d\n", id, topic, p)
			return nil
		}),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// dlqClearView is "dlq clear --json".
type dlqClearView struct {
	Topic   string `json:"topic"`
	Removed int64  `json:"removed"`
}

func dlqClearCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "clear TOPIC",
		Example: "  streamq dlq clear orders-staging --yes",
		Short:   "Delete every dead letter of a topic",
		Long: `Deletes every dead letter of the topic, on all partitions. The DLQ streams and consumer
groups reading them stay.`,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			size, err := adm.DLQSize(ctx, topic)
			if err != nil {
				return err
			}
			if err := a.confirm(ctx, fmt.Sprintf("delete all %s of topic %q", plural(size, "dead letter", "dead letters"), topic)); err != nil {
				return err
			}
			n, err := adm.ClearDLQ(ctx, topic)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, dlqClearView{Topic: topic, Removed: n})
			}
			fmt.Fprintf(a.stdout, "deleted %s of topic %q\n", plural(n, "dead letter", "dead letters"), topic)
			return nil
		}),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}
