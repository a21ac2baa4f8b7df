package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// growView is "partitions grow --json".
type growView struct {
	Topic      string `json:"topic"`
	Previous   int    `json:"previous"`
	Partitions int    `json:"partitions"`
}

func partitionsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "partitions",
		Example: "  streamq partitions grow orders 16",
		Short:   "Change a topic's partitions (grow)",
		GroupID: groupTopics,
		RunE:    a.parentRunE,
	}
	cmd.AddCommand(growCmd(a))
	return cmd
}

func growCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "grow TOPIC N",
		Example: "  streamq partitions grow orders 16 --yes",
		Short:   "Raise a topic's partition count to N",
		Long: `Raises the topic's partition count to N (grow only). The topic's consumer groups are
created on the new partitions first, so nothing published there is missed. Entries already
published stay where they are; keyed messages hash over all N partitions once publishers
re-read the count, so a key may move to another partition: per-key order holds within each
partition, not across the change.`,
		Args:              argsExactly("TOPIC", "N"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return usageErrorf("N must be a partition count, got %q", args[1])
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			q, err := adm.QueueInfo(ctx, topic)
			if err != nil {
				return err
			}
			if n <= q.Partitions {
				return usageErrorf("topic %q has %d partitions: grow only, N must be more than %d", topic, q.Partitions, q.Partitions)
			}
			what := fmt.Sprintf("grow topic %q from %d to %d partitions (cannot be undone; keys may move to new partitions)", topic, q.Partitions, n)
			if err := a.confirm(ctx, what); err != nil {
				return err
			}
			got, err := adm.GrowPartitions(ctx, topic, n)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, growView{Topic: topic, Previous: q.Partitions, Partitions: got})
			}
			fmt.Fprintf(a.stdout, "topic %q now has %d partitions (was %d)\n", topic, got, q.Partitions)
			return nil
		}),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}
