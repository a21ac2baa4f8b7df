package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/keys"
)

// deletedTopicView is "delete-topic --json": admin.Deleted.
type deletedTopicView struct {
	Topic       string   `json:"topic"`
	KeysRemoved int      `json:"keysRemoved"`
	Keys        []string `json:"keys"`
	// LiveMembers are the groups whose live members a --force delete went past.
	LiveMembers []liveGroupView `json:"liveMembers"`
	Tombstone   string          `json:"tombstone"` // "" unless LiveMembers is not empty
}

// liveGroupView is an admin.LiveGroup.
type liveGroupView struct {
	Group      string   `json:"group"`
	Members    []string `json:"members"`
	DLQMembers []string `json:"dlqMembers"`
}

func liveGroupViews(groups []admin.LiveGroup) []liveGroupView {
	out := make([]liveGroupView, len(groups))
	for i, g := range groups {
		out[i] = liveGroupView{Group: g.Group, Members: nonNil(g.Members), DLQMembers: nonNil(g.DLQMembers)}
	}
	return out
}

// The help of delete-topic and delete-group about live members (the tombstone's TTL is
// keys.TombstoneTTL).
const (
	topicLiveHelp = `While any of its groups has live members (heartbeat not expired), consuming the topic or
its DLQ, it refuses: it names them, deletes nothing and exits 4. --force deletes anyway
(the confirmation says members are live) and leaves a tombstone, kept 24h, so that the
running members stop instead of recreating the topic.`
	groupLiveHelp = `While the group has live members (heartbeat not expired), it refuses: it names them,
deletes nothing and exits 4. --force deletes anyway (the confirmation says members are
live) and leaves a tombstone, kept 24h, so that the running members stop instead of
recreating the group.`
)

// tombstoneTTL is keys.TombstoneTTL for people ("24h").
func tombstoneTTL() string { return fmt.Sprintf("%gh", keys.TombstoneTTL.Hours()) }

// deleteTopicLong is the long help of delete-topic.
const deleteTopicLong = `Deletes every key of the topic (found by scanning every node): partition streams and
DLQs, metadata, leases, membership, retry and delay sets, commit frontiers, offloaded
payloads, and its registry entry. Consumers lose their position. It cannot be undone.

` + topicLiveHelp

// deleteTopicCmd is "streamq delete-topic".
func deleteTopicCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "delete-topic TOPIC",
		Example:           "  streamq delete-topic orders-staging\n  streamq delete-topic orders-staging --yes --force",
		Short:             "Delete a topic entirely: streams, DLQs, groups, leases, payloads, registry",
		Long:              deleteTopicLong,
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.withAdmin(a.deleteTopic),
	}
	a.addYesFlag(cmd)
	a.addForceFlag(cmd, "topic")
	a.addJSONFlag(cmd)
	return cmd
}

// deleteTopic runs delete-topic: it refuses while the topic's groups have live members
// (unless --force), asks for confirmation, deletes the topic and reports what went.
func (a *app) deleteTopic(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	topic := args[0]
	q, err := adm.QueueInfo(ctx, topic)
	if err != nil {
		return err
	}
	live, err := adm.LiveMembers(ctx, topic)
	if err != nil {
		return err
	}
	subject := fmt.Sprintf("topic %q", topic)
	if len(live) > 0 && !a.force {
		return refuseLive(subject, describeLive(live))
	}
	what := fmt.Sprintf("delete topic %q with its %d partitions, %s, %s and consumer groups%s (cannot be undone)",
		topic, q.Partitions, plural(q.Entries, "entry", "entries"), plural(q.DLQLength, "dead letter", "dead letters"),
		whileLive(describeLive(live)))
	if err := a.confirm(ctx, what); err != nil {
		return err
	}
	bar := a.startProgress(fmt.Sprintf("deleting topic %q", topic), "", 0)
	d, err := adm.DeleteTopic(ctx, topic, admin.DeleteOptions{Force: a.force})
	bar.done()
	if lm := (*admin.LiveMembersError)(nil); errors.As(err, &lm) {
		return refuseLive(subject, describeLive(lm.Groups)) // joined since LiveMembers
	}
	if err != nil {
		return fmt.Errorf("%w (%d keys were removed before the error)", err, len(d.Keys))
	}
	return a.printDeletedTopic(topic, d)
}

// printDeletedTopic reports a deleted topic: its keys, and the tombstone a forced delete
// left for live members.
func (a *app) printDeletedTopic(topic string, d admin.Deleted) error {
	if a.json {
		return printJSON(a.stdout, deletedTopicView{Topic: topic, KeysRemoved: len(d.Keys), Keys: nonNil(d.Keys),
			LiveMembers: liveGroupViews(d.LiveGroups), Tombstone: d.Tombstone})
	}
	fmt.Fprintf(a.stdout, "deleted topic %q: %s removed\n", topic, plural(int64(len(d.Keys)), "key", "keys"))
	a.printTombstone(describeLive(d.LiveGroups), "topic", d.Tombstone)
	return nil
}

// deletedGroupView is "delete-group --json": admin.DeletedGroup.
type deletedGroupView struct {
	Topic       string   `json:"topic"`
	Group       string   `json:"group"`
	Partitions  int      `json:"partitions"` // partitions the group was destroyed on
	KeysRemoved int      `json:"keysRemoved"`
	Keys        []string `json:"keys"`
	// LiveMembers are the live members a --force delete went past.
	LiveMembers []string `json:"liveMembers"`
	Tombstone   string   `json:"tombstone"` // "" unless LiveMembers is not empty
}

// deleteGroupLong is the long help of delete-group.
const deleteGroupLong = `Destroys the consumer group on every partition (its pending entries go with it) and
removes its leases, retry sets, membership and commit frontier. It cannot be undone. A
group of the same name consuming the topic's DLQ is left alone.

` + groupLiveHelp

// deleteGroupCmd is "streamq delete-group".
func deleteGroupCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "delete-group TOPIC GROUP",
		Example:           "  streamq delete-group orders old-billing\n  streamq delete-group orders old-billing --yes",
		Short:             "Delete a consumer group from a topic, with its pending entries and leases",
		Long:              deleteGroupLong,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.withAdmin(a.deleteGroup),
	}
	a.addYesFlag(cmd)
	a.addForceFlag(cmd, "group")
	a.addJSONFlag(cmd)
	return cmd
}

// deleteGroup runs delete-group: it refuses while the group has live members (unless
// --force), asks for confirmation, deletes the group and reports what went.
func (a *app) deleteGroup(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	topic, group := args[0], args[1]
	s, err := adm.GroupStats(ctx, topic, group)
	if err != nil {
		return err
	}
	subject := fmt.Sprintf("consumer group %q of topic %q", group, topic)
	live := strings.Join(s.Members, ", ")
	if live != "" && !a.force {
		return refuseLive(subject, live)
	}
	what := fmt.Sprintf("delete %s%s (%d pending, lag %d; cannot be undone)", subject, whileLive(live), s.Pending, s.Lag)
	if err := a.confirm(ctx, what); err != nil {
		return err
	}
	d, err := adm.DeleteGroup(ctx, topic, group, admin.DeleteOptions{Force: a.force})
	if lm := (*admin.LiveMembersError)(nil); errors.As(err, &lm) {
		return refuseLive(subject, strings.Join(lm.Members, ", ")) // joined since GroupStats
	}
	if err != nil {
		return err
	}
	if a.json {
		return printJSON(a.stdout, deletedGroupView{Topic: topic, Group: group, Partitions: d.Partitions,
			KeysRemoved: len(d.Keys), Keys: nonNil(d.Keys), LiveMembers: nonNil(d.LiveMembers), Tombstone: d.Tombstone})
	}
	fmt.Fprintf(a.stdout, "deleted group %q of topic %q: destroyed on %d partitions, %s removed\n",
		group, topic, d.Partitions, plural(int64(len(d.Keys)), "key", "keys"))
	a.printTombstone(strings.Join(d.LiveMembers, ", "), "group", d.Tombstone)
	return nil
}

// describeLive names the live members of groups for a message.
func describeLive(groups []admin.LiveGroup) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.String()
	}
	return strings.Join(parts, "; ")
}

// refuseLive is the error of a delete refused because of live members (exitLiveMembers).
func refuseLive(subject, live string) error {
	return fmt.Errorf("refusing to delete %s: %w (%s); stop them first, or pass --force to delete anyway "+
		"(they stop when they find it deleted)", subject, admin.ErrLiveMembers, live)
}

// whileLive is what the confirmation adds when members are live ("" when none).
func whileLive(live string) string {
	if live == "" {
		return ""
	}
	return fmt.Sprintf(" while members are live (%s), which will stop", live)
}

// printTombstone tells which live members a forced delete went past.
func (a *app) printTombstone(live, what, tombstone string) {
	if tombstone == "" {
		return
	}
	fmt.Fprintf(a.stdout, "live members (%s) stop when they find the %s gone: tombstone %s kept %s\n",
		live, what, tombstone, tombstoneTTL())
}
