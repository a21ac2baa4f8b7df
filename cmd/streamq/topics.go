package main

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// topicView is one topic of "topics --json".
type topicView struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Length     int64  `json:"length"`    // published messages held, summed over partitions
	Retries    int64  `json:"retries"`   // retry entries held besides, summed over partitions
	Groups     int    `json:"groups"`    // consumer groups (the most any partition has)
	DLQLength  int64  `json:"dlqLength"` // dead letters, summed over partitions
}

func topicsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "List topics with partitions, length, retries, consumer groups and DLQ size",
		Long: `Lists every topic: partitions, LENGTH (the published messages its partitions hold),
RETRIES (the retry entries they hold besides: retries, and replays to one group, which
only that group delivers), consumer groups and dead letters.`,
		Example: `  streamq topics
  streamq topics -o json | jq '.[] | select(.dlqLength > 0) | .topic'`,
		GroupID: groupTopics,
		Args:    argsExactly(),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			names, err := adm.ListTopics(ctx)
			if err != nil {
				return err
			}
			sort.Strings(names)
			views := []topicView{}
			for _, t := range names {
				q, err := adm.QueueInfo(ctx, t)
				if errors.Is(err, admin.ErrTopicNotFound) {
					continue // deleted meanwhile
				}
				if err != nil {
					return err
				}
				views = append(views, topicView{Topic: t, Partitions: q.Partitions, Length: q.Length, Retries: q.Retries, Groups: q.Groups, DLQLength: q.DLQLength})
			}
			if a.json {
				return printJSON(a.stdout, views)
			}
			if len(views) == 0 {
				fmt.Fprintln(a.stdout, "no topics")
				return nil
			}
			t := newTable(a.stdout, "TOPIC", "PARTITIONS", "LENGTH", "RETRIES", "GROUPS", "DLQ").fit(a.fitWidth(), 0)
			for _, v := range views {
				t.row(v.Topic, v.Partitions, v.Length, v.Retries, v.Groups, v.DLQLength)
			}
			return t.flush()
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// createdTopicView is the result of "create-topic --json".
type createdTopicView struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
}

func createTopicCmd(a *app) *cobra.Command {
	var partitions int
	cmd := &cobra.Command{
		Use:     "create-topic TOPIC --partitions N",
		Example: "  streamq create-topic orders --partitions 8",
		Short:   "Create a topic with N partitions",
		Long: `Registers a topic with N partitions, as a publisher's first write does. The partition
streams appear with the first message or consumer group. A topic that exists already is an
error (exit code 1); grow it with "streamq partitions grow".`,
		GroupID: groupTopics,
		Args:    argsExactly("TOPIC"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if partitions < 1 {
				return usageErrorf("--partitions must be at least 1, got %d", partitions)
			}
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			if err := adm.CreateTopic(ctx, args[0], partitions); err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, createdTopicView{Topic: args[0], Partitions: partitions})
			}
			fmt.Fprintf(a.stdout, "created topic %q with %d partitions\n", args[0], partitions)
			return nil
		}),
	}
	cmd.Flags().IntVarP(&partitions, "partitions", "p", 0, "number of partitions (required)")
	_ = cmd.MarkFlagRequired("partitions")
	a.addJSONFlag(cmd)
	return cmd
}
