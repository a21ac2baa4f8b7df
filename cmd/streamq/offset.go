package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// resetView is "reset-offset --json": admin.ResetResult.
type resetView struct {
	Topic       string `json:"topic"`
	Group       string `json:"group"`
	Offset      string `json:"offset"` // the offset as admin.ParseOffset read it
	Partitions  int    `json:"partitions"`
	PendingKept bool   `json:"pendingKept"`
	Note        string `json:"note"`
}

// resetOffsetLong is the long help of reset-offset.
const resetOffsetLong = `Moves the consumer group's position (last-delivered-id) on every partition of the topic.
TO is one of:
  beginning (or 0, earliest)   re-deliver every entry still in the streams
  latest (or $, end)           skip everything there now; deliver only new entries
  1700000000000-0              resume after this stream id
  2024-05-01T12:00:00Z         resume at the first entry at or after this time (RFC 3339)
  @1700000000000               the same, in unix milliseconds
Pending entries (delivered, not acked) stay pending and are re-delivered by each
partition's next owner. Running members pick the new position up with their next read.`

// resetOffsetCmd is "streamq reset-offset".
func resetOffsetCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset-offset TOPIC GROUP TO",
		Short: "Move a group's position on every partition: beginning, latest, an id or a time",
		Long:  resetOffsetLong,
		Example: `  streamq reset-offset orders payments 2024-05-01T12:00:00Z
  streamq reset-offset orders payments latest --yes`,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP", "TO"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.runE(a.resetOffset),
	}
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// resetOffset runs reset-offset: it parses TO (a usage error when it is not an offset),
// checks topic and group, asks for confirmation, moves the group and prints the result.
func (a *app) resetOffset(cmd *cobra.Command, args []string) error {
	topic, group := args[0], args[1]
	to, err := admin.ParseOffset(args[2])
	if err != nil {
		return &usageError{err: err}
	}
	ctx := cmd.Context()
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	// Check topic and group before asking.
	s, err := adm.GroupStats(ctx, topic, group)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("move consumer group %q of topic %q (lag %d, %d pending) to %s on every partition",
		group, topic, s.Lag, s.Pending, to)
	if err := a.confirm(ctx, what); err != nil {
		return err
	}
	res, err := adm.ResetGroupOffset(ctx, topic, group, to)
	if err != nil {
		return err
	}
	if a.json {
		return printJSON(a.stdout, resetView{
			Topic: topic, Group: group, Offset: to.String(),
			Partitions: res.Partitions, PendingKept: res.PendingKept, Note: res.Note,
		})
	}
	fmt.Fprintln(a.stdout, strings.Join(wrapText(res.Note, a.width()), "\n"))
	return nil
}
