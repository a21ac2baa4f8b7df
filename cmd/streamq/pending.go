package main

import (
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

func pendingCmd(a *app) *cobra.Command {
	var (
		limit   int
		sortBy  string
		minIdle time.Duration
	)
	cmd := &cobra.Command{
		Use:   "pending TOPIC GROUP",
		Short: "List a group's delivered, unacked entries across partitions",
		Long: fmt.Sprintf(`Lists the group's pending entries (delivered, not acked): the oldest %d of each
partition are sampled, merged, filtered by --min-idle and sorted.`, admin.MaxPendingPerPartition),
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			order, ok := pendingSorts[sortBy]
			if !ok {
				return usageErrorf("--sort must be idle, deliveries or id, got %q", sortBy)
			}
			if limit < 1 {
				return usageErrorf("--limit must be at least 1, got %d", limit)
			}
			if minIdle < 0 {
				return usageErrorf("--min-idle must not be negative, got %s", minIdle)
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			entries, err := adm.Pending(ctx, args[0], args[1], admin.PendingOptions{Limit: limit, Sort: order, MinIdle: minIdle})
			if err != nil {
				return err
			}
			views := []pendingView{}
			for _, e := range entries {
				views = append(views, pendingView{Partition: e.Partition, ID: e.ID, Consumer: e.Consumer, IdleMs: ms(e.Idle), Deliveries: e.Deliveries})
			}
			if a.json {
				return printJSON(a.stdout, views)
			}
			if len(views) == 0 {
				fmt.Fprintf(a.stdout, "group %q has no pending entries on topic %q\n", args[1], args[0])
				return nil
			}
			t := newTable(a.stdout, "PARTITION", "ID", "CONSUMER", "IDLE", "DELIVERIES")
			for _, e := range entries {
				t.row(e.Partition, e.ID, e.Consumer, human(e.Idle), e.Deliveries)
			}
			return t.flush()
		}),
	}
	f := cmd.Flags()
	f.IntVarP(&limit, "limit", "n", admin.DefaultPendingLimit, "most entries to list")
	f.StringVar(&sortBy, "sort", "idle", "order: idle (longest first), deliveries (most first) or id (oldest first)")
	f.DurationVar(&minIdle, "min-idle", 0, "only entries idle at least this long, e.g. 30s")
	_ = cmd.RegisterFlagCompletionFunc("sort", cobra.FixedCompletions([]cobra.Completion{"idle", "deliveries", "id"}, cobra.ShellCompDirectiveNoFileComp))
	a.addJSONFlag(cmd)
	return cmd
}
