package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// pauseView is "pause --json" and "resume --json".
type pauseView struct {
	Topic    string `json:"topic"`
	Group    string `json:"group"`
	Paused   bool   `json:"paused"`
	PausedAt string `json:"pausedAt,omitempty"`
	Changed  bool   `json:"changed"` // false: it already was in that state
}

const pauseLong = `Pauses a consumer group on a topic for every member, in every process: within the
members' RebalanceInterval each stops reading and handing messages to handlers, keeps its
leases and its place in the group, and lets the messages in flight finish. Messages
published meanwhile wait. Members that restart or join stay paused until "streamq resume".
TOPIC may be a DLQ topic (orders:dlq) to pause a group consuming dead letters.`

const pauseExample = `  streamq pause orders payments
  streamq stats orders payments     # "paused by an operator since ..."
  streamq resume orders payments`

func pauseCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "pause TOPIC GROUP",
		Short:             "Pause a consumer group for every member (until resume)",
		Long:              pauseLong,
		Example:           pauseExample,
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.withAdmin(a.pause),
	}
	a.addJSONFlag(cmd)
	return cmd
}

func resumeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume TOPIC GROUP",
		Short: "Resume a consumer group paused with pause",
		Long: `Resumes a group paused with "streamq pause": within the members' RebalanceInterval
every member goes on where it stopped, in order.`,
		Example:           "  streamq resume orders payments",
		GroupID:           groupGroups,
		Args:              argsExactly("TOPIC", "GROUP"),
		ValidArgsFunction: a.completeArgs(argTopic, argGroup),
		RunE:              a.withAdmin(a.resume),
	}
	a.addJSONFlag(cmd)
	return cmd
}

// pause runs "streamq pause".
func (a *app) pause(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	before, err := adm.GroupPause(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	p, err := adm.PauseGroup(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	v := pauseView{Topic: args[0], Group: args[1], Paused: true, PausedAt: rfc3339(p.Since), Changed: !before.Paused}
	if a.json {
		return printJSON(a.stdout, v)
	}
	if !v.Changed {
		fmt.Fprintf(a.stdout, "group %q on topic %q was already paused (since %s)\n", v.Group, v.Topic, a.timeText(p.Since))
		return nil
	}
	fmt.Fprintf(a.stdout, "paused group %q on topic %q (since %s); every member stops within its RebalanceInterval\n",
		v.Group, v.Topic, a.timeText(p.Since))
	return nil
}

// resume runs "streamq resume".
func (a *app) resume(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	was, err := adm.ResumeGroup(ctx, args[0], args[1])
	if err != nil {
		return err
	}
	v := pauseView{Topic: args[0], Group: args[1], Changed: was}
	if a.json {
		return printJSON(a.stdout, v)
	}
	if !was {
		fmt.Fprintf(a.stdout, "group %q on topic %q was not paused\n", v.Group, v.Topic)
		return nil
	}
	fmt.Fprintf(a.stdout, "resumed group %q on topic %q; every member goes on within its RebalanceInterval\n", v.Group, v.Topic)
	return nil
}
