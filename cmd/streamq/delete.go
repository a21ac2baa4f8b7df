package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// deletedTopicView is "delete-topic --json": admin.Deleted.
type deletedTopicView struct {
	Topic       string   `json:"topic"`
	KeysRemoved int      `json:"keysRemoved"`
	Keys        []string `json:"keys"`
}

func deleteTopicCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete-topic TOPIC",
		Short: "Delete a topic entirely: streams, DLQs, groups, leases, payloads, registry",
		Long: `Deletes every key of the topic (found by scanning every node): partition streams and
DLQs, metadata, leases, membership, retry and delay sets, commit frontiers, offloaded
payloads, and its registry entry. Consumers lose their position. It cannot be undone.`,
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			q, err := adm.QueueInfo(ctx, topic)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("delete topic %q with its %d partitions, %s, %s and consumer groups (cannot be undone)",
				topic, q.Partitions, plural(q.Length, "entry", "entries"), plural(q.DLQLength, "dead letter", "dead letters"))
			if err := a.confirm(ctx, what); err != nil {
				return err
			}
			bar := a.startProgress(fmt.Sprintf("deleting topic %q", topic), "", 0)
			d, err := adm.DeleteTopic(ctx, topic)
			bar.done()
			if err != nil {
				return fmt.Errorf("%w (%d keys were removed before the error)", err, len(d.Keys))
			}
			if a.json {
				return printJSON(a.stdout, deletedTopicView{Topic: topic, KeysRemoved: len(d.Keys), Keys: nonNil(d.Keys)})
			}
			fmt.Fprintf(a.stdout, "deleted topic %q: %s removed\n", topic, plural(int64(len(d.Keys)), "key", "keys"))
			return nil
		}),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// deletedGroupView is "delete-group --json": admin.DeletedGroup.
type deletedGroupView struct {
	Topic       string   `json:"topic"`
	Group       string   `json:"group"`
	Partitions  int      `json:"partitions"` // partitions the group was destroyed on
	KeysRemoved int      `json:"keysRemoved"`
	Keys        []string `json:"keys"`
}

func deleteGroupCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete-group TOPIC GROUP",
		Short: "Delete a consumer group from a topic, with its pending entries and leases",
		Long: `Destroys the consumer group on every partition (its pending entries go with it) and
removes its leases, retry sets, membership and commit frontier. Stop the group's
subscribers first: a running member would re-create it. It cannot be undone.`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			topic, group := args[0], args[1]
			ctx := cmd.Context()
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			s, err := adm.GroupStats(ctx, topic, group)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("delete consumer group %q of topic %q (%d live members, %d pending, lag %d; cannot be undone)",
				group, topic, len(s.Members), s.Pending, s.Lag)
			if err := a.confirm(ctx, what); err != nil {
				return err
			}
			d, err := adm.DeleteGroup(ctx, topic, group)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(a.stdout, deletedGroupView{Topic: topic, Group: group, Partitions: d.Partitions, KeysRemoved: len(d.Keys), Keys: nonNil(d.Keys)})
			}
			fmt.Fprintf(a.stdout, "deleted group %q of topic %q: destroyed on %d partitions, %s removed\n",
				group, topic, d.Partitions, plural(int64(len(d.Keys)), "key", "keys"))
			return nil
		}),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}
