package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// pendingView is one entry of "pending --json": admin.PendingEntry.
type pendingView struct {
	Partition  int    `json:"partition"`
	ID         string `json:"id"`
	Consumer   string `json:"consumer"`
	IdleMs     int64  `json:"idleMs"`
	Deliveries int64  `json:"deliveries"`
}

// pendingSorts maps --sort to admin's orders.
var pendingSorts = map[string]admin.PendingSort{
	"idle": admin.SortByIdle, "deliveries": admin.SortByDeliveries, "id": admin.SortByID,
}

// pendingOrders maps --order to admin's directions ("": the sort's own).
var pendingOrders = map[string]admin.PendingOrder{
	"": admin.OrderDefault, "asc": admin.Ascending, "desc": admin.Descending,
}

// pendingOpts are the flags of pending.
type pendingOpts struct {
	a       *app
	limit   int
	sortBy  string
	order   string
	minIdle time.Duration
}

// pendingCmd is "streamq pending".
func pendingCmd(a *app) *cobra.Command {
	o := &pendingOpts{a: a}
	cmd := &cobra.Command{
		Use:   "pending TOPIC GROUP",
		Short: "List a group's delivered, unacked entries across partitions",
		Long: fmt.Sprintf(`Lists the group's pending entries (delivered, not acked): the oldest %d of each
partition are sampled, merged, filtered by --min-idle and sorted. When --min-idle hides
every entry, it says how many it hid.`, admin.MaxPendingPerPartition),
		Example: `  streamq pending orders payments
  streamq pending orders payments --min-idle 30s --sort deliveries -n 20`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.runE(o.run),
	}
	f := cmd.Flags()
	f.IntVarP(&o.limit, "limit", "n", admin.DefaultPendingLimit, "most entries to list")
	f.StringVar(&o.sortBy, "sort", "idle", "order: idle (longest first), deliveries (most first) or id (oldest first)")
	f.StringVar(&o.order, "order", "", "direction of --sort: asc (smallest first) or desc (largest first); default: the sort's own")
	durationVar(f, &o.minIdle, "min-idle", 0, "only entries idle at least this long, e.g. 30s")
	_ = cmd.RegisterFlagCompletionFunc("sort", cobra.FixedCompletions([]cobra.Completion{"idle", "deliveries", "id"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("order", cobra.FixedCompletions([]cobra.Completion{"asc", "desc"}, cobra.ShellCompDirectiveNoFileComp))
	a.addJSONFlag(cmd)
	return cmd
}

// options checks the flags and turns them into admin's options (a usage error when one is
// out of range).
func (o *pendingOpts) options() (admin.PendingOptions, error) {
	order, ok := pendingSorts[o.sortBy]
	if !ok {
		return admin.PendingOptions{}, usageErrorf("--sort must be idle, deliveries or id, got %q", o.sortBy)
	}
	direction, ok := pendingOrders[o.order]
	if !ok {
		return admin.PendingOptions{}, usageErrorf("--order must be asc or desc, got %q", o.order)
	}
	if o.limit < 1 {
		return admin.PendingOptions{}, usageErrorf("--limit must be at least 1, got %d", o.limit)
	}
	if o.minIdle < 0 {
		return admin.PendingOptions{}, usageErrorf("--min-idle must not be negative, got %s", o.minIdle)
	}
	return admin.PendingOptions{Limit: o.limit, Sort: order, Order: direction, MinIdle: o.minIdle}, nil
}

// run runs pending: it reads the group's pending entries and prints them.
func (o *pendingOpts) run(cmd *cobra.Command, args []string) error {
	opts, err := o.options()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	adm, err := o.a.admin(ctx)
	if err != nil {
		return err
	}
	entries, err := adm.Pending(ctx, args[0], args[1], opts)
	if err != nil {
		return err
	}
	if len(entries) == 0 && opts.MinIdle > 0 && !o.a.json {
		return o.explainEmpty(ctx, adm, args[0], args[1])
	}
	return o.a.printPending(args[0], args[1], entries)
}

// explainEmpty says why pending found nothing under --min-idle: how many pending entries
// the filter hid, or that there are none at all.
func (o *pendingOpts) explainEmpty(ctx context.Context, adm *admin.Admin, topic, group string) error {
	gl, err := adm.GroupLag(ctx, topic, group)
	if err != nil {
		return err
	}
	if gl.Pending == 0 {
		return o.a.printPending(topic, group, nil)
	}
	fmt.Fprintf(o.a.stdout, "no pending entry of group %q on topic %q is idle %s or more: --min-idle hid %s\n",
		group, topic, durationText(o.minIdle), plural(gl.Pending, "pending entry", "pending entries"))
	return nil
}

// printPending prints a group's pending entries: a table, or JSON with --json.
func (a *app) printPending(topic, group string, entries []admin.PendingEntry) error {
	views := []pendingView{}
	for _, e := range entries {
		views = append(views, pendingView{Partition: e.Partition, ID: e.ID, Consumer: e.Consumer, IdleMs: ms(e.Idle), Deliveries: e.Deliveries})
	}
	if a.json {
		return printJSON(a.stdout, views)
	}
	if len(views) == 0 {
		fmt.Fprintf(a.stdout, "group %q has no pending entries on topic %q\n", group, topic)
		return nil
	}
	t := newTable(a.stdout, "PARTITION", "ID", "CONSUMER", "IDLE", "DELIVERIES").fit(a.fitWidth(), 2)
	for _, e := range entries {
		t.row(e.Partition, e.ID, e.Consumer, human(e.Idle), e.Deliveries)
	}
	return t.flush()
}
