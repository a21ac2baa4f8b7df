package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// sweepView is "payloads sweep --json".
type sweepView struct {
	Topic   string `json:"topic"`
	Deleted int64  `json:"deleted"`
}

// payloadsCmd is "streamq payloads".
func payloadsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "payloads",
		Example: "  streamq payloads sweep orders",
		Short:   "Manage a topic's offloaded payloads (sweep)",
		GroupID: groupTopics,
		RunE:    a.parentRunE,
	}
	cmd.AddCommand(sweepCmd(a))
	return cmd
}

// sweepCmd is "streamq payloads sweep".
func sweepCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep TOPIC",
		Short: "Delete the offloaded payloads whose entry is gone",
		Long: `Deletes the topic's offloaded payloads whose entry no longer exists (trimmed or deleted),
on every partition, now: the sweep the subscribers run in the background. A payload whose
entry exists is never deleted; payloads indexed in the last minute are left to a later
sweep.`,
		Example:           `  streamq trim orders --older-than 24h --yes && streamq payloads sweep orders`,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
			topic := args[0]
			n, err := adm.SweepOrphanedPayloads(ctx, topic)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, sweepView{Topic: topic, Deleted: n})
			}
			fmt.Fprintf(a.stdout, "deleted %s of topic %q\n", plural(n, "orphaned payload", "orphaned payloads"), topic)
			return nil
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}
