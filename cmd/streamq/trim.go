package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// trimView is "trim --json".
type trimView struct {
	Topic string `json:"topic"`
	// MaxLen is --maxlen (null with --older-than); OlderThanMs is --older-than (null with --maxlen).
	MaxLen      *int64 `json:"maxLen"`
	OlderThanMs *int64 `json:"olderThanMs"`
	Removed     int64  `json:"removed"`
}

func trimCmd(a *app) *cobra.Command {
	var (
		maxLen    int64
		olderThan time.Duration
		pageSize  int
	)
	cmd := &cobra.Command{
		Use:   "trim TOPIC (--maxlen N | --older-than AGE)",
		Short: "Remove a topic's oldest entries, by count or by age",
		Long: `Removes entries from a topic, ignoring consumer groups: entries not yet delivered or acked
are removed too.

  --maxlen N        keeps the newest ceil(N/partitions) entries of each partition (XTRIM)
  --older-than AGE  removes entries older than AGE (by their id time, against the Redis
                    server's clock), a page of --page-size entries at a time (XRANGE + XDEL),
                    with a progress line on a terminal`,
		Example: `  streamq trim orders --maxlen 100000
  streamq trim orders --older-than 24h --yes`,
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			byLen, byAge := cmd.Flags().Changed("maxlen"), cmd.Flags().Changed("older-than")
			switch {
			case byLen == byAge:
				return usageErrorf("give exactly one of --maxlen and --older-than")
			case byLen && maxLen < 0:
				return usageErrorf("--maxlen must not be negative, got %d", maxLen)
			case byAge && olderThan <= 0:
				return usageErrorf("--older-than must be positive, got %s", olderThan)
			case pageSize < 1:
				return usageErrorf("--page-size must be at least 1, got %d", pageSize)
			case byLen && cmd.Flags().Changed("page-size"):
				return usageErrorf("--page-size goes with --older-than")
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			topic := args[0]
			q, err := adm.QueueInfo(ctx, topic)
			if err != nil {
				return err
			}
			v := trimView{Topic: topic}
			if byLen {
				what := fmt.Sprintf("trim topic %q (%d partitions, %s) to at most %d entries, about %d per partition, including entries not yet consumed",
					topic, q.Partitions, plural(q.Length, "entry", "entries"), maxLen, (maxLen+int64(q.Partitions)-1)/int64(q.Partitions))
				if err := a.confirm(ctx, what); err != nil {
					return err
				}
				v.MaxLen = &maxLen
				v.Removed, err = adm.Trim(ctx, topic, maxLen)
			} else {
				what := fmt.Sprintf("remove the entries of topic %q (%d partitions, %s) older than %s, including entries not yet consumed",
					topic, q.Partitions, plural(q.Length, "entry", "entries"), olderThan)
				if err := a.confirm(ctx, what); err != nil {
					return err
				}
				age := ms(olderThan)
				v.OlderThanMs = &age
				bar := a.startProgress("trimming", "entries removed", 0)
				v.Removed, err = adm.TrimByAge(ctx, topic, olderThan, admin.TrimOptions{PageSize: pageSize, Progress: bar.set})
				bar.done()
			}
			if err != nil {
				return fmt.Errorf("%w (removed %s before the error)", err, plural(v.Removed, "entry", "entries"))
			}
			if a.json {
				return printJSON(a.stdout, v)
			}
			fmt.Fprintf(a.stdout, "removed %s from topic %q\n", plural(v.Removed, "entry", "entries"), topic)
			return nil
		}),
	}
	f := cmd.Flags()
	f.Int64Var(&maxLen, "maxlen", 0, "keep at most N entries in total (amortized over partitions)")
	f.DurationVar(&olderThan, "older-than", 0, "remove entries older than this, e.g. 24h or 90m")
	f.IntVar(&pageSize, "page-size", admin.DefaultTrimPageSize, "entries per XRANGE+XDEL step with --older-than")
	cmd.MarkFlagsMutuallyExclusive("maxlen", "older-than")
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}
