package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// infoView is "info --json": admin.QueueInfo.
type infoView struct {
	Topic        string              `json:"topic"`
	Partitions   int                 `json:"partitions"`
	Length       int64               `json:"length"`
	FirstID      string              `json:"firstId"` // "" when the topic is empty
	LastID       string              `json:"lastId"`
	Groups       int                 `json:"groups"`
	DLQLength    int64               `json:"dlqLength"`
	PerPartition []partitionInfoView `json:"perPartition"`
}

// partitionInfoView is admin.PartitionInfo.
type partitionInfoView struct {
	Partition int    `json:"partition"`
	Stream    string `json:"stream"`
	Length    int64  `json:"length"`
	FirstID   string `json:"firstId"`
	LastID    string `json:"lastId"`
	Groups    int    `json:"groups"`
	DLQLength int64  `json:"dlqLength"`
}

func newInfoView(q admin.QueueInfo) infoView {
	v := infoView{
		Topic: q.Topic, Partitions: q.Partitions, Length: q.Length, FirstID: q.FirstID, LastID: q.LastID,
		Groups: q.Groups, DLQLength: q.DLQLength, PerPartition: []partitionInfoView{},
	}
	for _, p := range q.PerPartition {
		v.PerPartition = append(v.PerPartition, partitionInfoView{
			Partition: p.Partition, Stream: p.Stream, Length: p.Length, FirstID: p.FirstID, LastID: p.LastID,
			Groups: p.Groups, DLQLength: p.DLQLength,
		})
	}
	return v
}

func infoCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "info TOPIC",
		Short:             "Show a topic's length, first and last ids, groups and DLQ, per partition",
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.withAdmin(func(ctx context.Context, adm *admin.Admin, cmd *cobra.Command, args []string) error {
			q, err := adm.QueueInfo(ctx, args[0])
			if err != nil {
				return err
			}
			v := newInfoView(q)
			if a.json {
				return printJSON(a.stdout, v)
			}
			t := newTable(a.stdout)
			t.row("topic", v.Topic)
			t.row("partitions", v.Partitions)
			t.row("length", v.Length)
			t.row("first id", orDash(v.FirstID))
			t.row("last id", orDash(v.LastID))
			t.row("groups", v.Groups)
			t.row("dead letters", v.DLQLength)
			if err := t.flush(); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout)
			t = newTable(a.stdout, "PARTITION", "LENGTH", "FIRST ID", "LAST ID", "GROUPS", "DLQ")
			for _, p := range v.PerPartition {
				t.row(p.Partition, p.Length, orDash(p.FirstID), orDash(p.LastID), p.Groups, p.DLQLength)
			}
			return t.flush()
		}),
	}
	a.addJSONFlag(cmd)
	return cmd
}
