package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// outboxView is one outbox of "outbox status --json".
type outboxView struct {
	Name          string            `json:"name"`
	Table         string            `json:"table"`
	Group         string            `json:"group"`
	Dialect       string            `json:"dialect"`
	Measured      bool              `json:"measured"`
	Pending       int64             `json:"pending"`
	OldestAgeMs   int64             `json:"oldestAgeMs"`
	MeasuredAt    jsonTime          `json:"measuredAt"`
	Moved         int64             `json:"moved"`
	ReportedAt    jsonTime          `json:"reportedAt"`
	SinceReportMs int64             `json:"sinceReportMs"`
	Live          bool              `json:"live"`
	Warning       string            `json:"warning,omitempty"`
	Relays        []outboxRelayView `json:"relays"`
}

// outboxRelayView is one relay of an outbox.
type outboxRelayView struct {
	ID            string   `json:"id"`
	Host          string   `json:"host"`
	PID           int      `json:"pid"`
	StartedAt     jsonTime `json:"startedAt"`
	ReportedAt    jsonTime `json:"reportedAt"`
	SinceReportMs int64    `json:"sinceReportMs"`
	IntervalMs    int64    `json:"intervalMs"`
	Moved         int64    `json:"moved"`
	Live          bool     `json:"live"`
}

const outboxStatusLong = `Shows how far the streamq topics are behind each transactional outbox (the outbox module's
SQL table): rows waiting, the age of the oldest, messages moved, and which relays are live.
The relays report it into Redis every --report-interval (10s); a relay silent for three of
its intervals is not live. With no live relay nothing moves the rows: the command says so
(exit code 0 all the same; --json has "live": false). For the database's own count, run
"streamq-outbox status" against it.

NAME is the relay's --name: its table, or TABLE:GROUP for a group other than the default.`

const outboxStatusExample = `  streamq outbox status                  # every outbox reported within a week
  streamq outbox status orders_outbox    # one outbox and its relays
  streamq outbox status --json | jq '.[] | select(.live | not) | .name'`

func outboxCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "outbox",
		Example: "  streamq outbox status\n  streamq outbox status orders-outbox -o json",
		Short:   "Transactional outboxes: the relays' lag",
		GroupID: groupOther,
		RunE:    a.parentRunE,
	}
	status := &cobra.Command{
		Use:     "status [NAME]",
		Short:   "Rows waiting, oldest age, moved total and live relays of each outbox",
		Long:    outboxStatusLong,
		Example: outboxStatusExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    a.withAdmin(a.outboxStatus),
	}
	a.addJSONFlag(status)
	cmd.AddCommand(status)
	return cmd
}

// outboxStatus runs "streamq outbox status [NAME]".
func (a *app) outboxStatus(ctx context.Context, adm *admin.Admin, _ *cobra.Command, args []string) error {
	if len(args) == 1 {
		s, err := adm.OutboxStatus(ctx, args[0])
		if errors.Is(err, admin.ErrOutboxNotFound) {
			return &notFoundError{msg: fmt.Sprintf("no relay reported outbox %q within a week (is a relay running with this Redis and --prefix-control?)", args[0])}
		}
		if err != nil {
			return err
		}
		if a.json {
			return printJSON(a.stdout, newOutboxView(s))
		}
		return a.printOutbox(s)
	}
	all, err := adm.OutboxStatuses(ctx)
	if err != nil {
		return err
	}
	if a.json {
		views := make([]outboxView, len(all))
		for i, s := range all {
			views[i] = newOutboxView(s)
		}
		return printJSON(a.stdout, views)
	}
	return a.printOutboxes(all)
}

// printOutboxes is the table of every outbox.
func (a *app) printOutboxes(all []admin.OutboxStatus) error {
	if len(all) == 0 {
		fmt.Fprintln(a.stdout, "no outbox reported within a week\n(is a relay running with this Redis and --prefix-control?)")
		return nil
	}
	t := newTable(a.stdout, "OUTBOX", "WAITING", "OLDEST", "MOVED", "LAST REPORT", "RELAYS")
	for _, s := range all {
		t.row(s.Name, pendingText(s), oldestText(s), s.Moved, agoText(s.SinceReport), relaysText(s))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, s := range all {
		if w := outboxWarning(s); w != "" {
			fmt.Fprintf(a.stdout, "%s: %s\n", s.Name, w)
		}
	}
	return nil
}

// printOutbox shows one outbox and its relays.
func (a *app) printOutbox(s admin.OutboxStatus) error {
	fmt.Fprintf(a.stdout, "outbox:        %s (table %s, group %s, %s)\n", s.Name, s.Table, s.Group, s.Dialect)
	fmt.Fprintf(a.stdout, "rows waiting:  %s\n", pendingText(s))
	fmt.Fprintf(a.stdout, "oldest:        %s\n", oldestText(s))
	fmt.Fprintf(a.stdout, "moved:         %d\n", s.Moved)
	fmt.Fprintf(a.stdout, "last report:   %s (%s)\n", agoText(s.SinceReport), a.timeText(s.ReportedAt))
	if w := outboxWarning(s); w != "" {
		fmt.Fprintln(a.stdout, w)
	}
	fmt.Fprintln(a.stdout)
	t := newTable(a.stdout, "RELAY", "HOST", "PID", "STARTED", "LAST REPORT", "MOVED", "LIVE")
	for _, r := range s.Relays {
		t.row(r.ID, r.Host, r.PID, a.timeText(r.StartedAt), agoText(r.SinceReport), r.Moved, liveText(r.Live))
	}
	return t.flush()
}

// outboxWarning is the line for an outbox nothing moves ("" when a relay is live).
func outboxWarning(s admin.OutboxStatus) string {
	if s.Live {
		return ""
	}
	return fmt.Sprintf("no relay reporting for %s: is a relay running?", s.SinceReport.Round(time.Second))
}

func pendingText(s admin.OutboxStatus) string {
	if !s.Measured {
		return "?"
	}
	return fmt.Sprint(s.Pending)
}

func oldestText(s admin.OutboxStatus) string {
	switch {
	case !s.Measured:
		return "?"
	case s.Pending == 0:
		return "-"
	}
	return human(s.OldestAge)
}

func agoText(d time.Duration) string { return d.Round(time.Second).String() + " ago" }

func relaysText(s admin.OutboxStatus) string {
	live := 0
	for _, r := range s.Relays {
		if r.Live {
			live++
		}
	}
	if live == 0 {
		return "none live"
	}
	return fmt.Sprintf("%d live", live)
}

func liveText(live bool) string {
	if live {
		return "yes"
	}
	return "no"
}

func newOutboxView(s admin.OutboxStatus) outboxView {
	v := outboxView{Name: s.Name, Table: s.Table, Group: s.Group, Dialect: s.Dialect, Measured: s.Measured,
		Pending: s.Pending, OldestAgeMs: ms(s.OldestAge), MeasuredAt: jsonTime(s.MeasuredAt), Moved: s.Moved,
		ReportedAt: jsonTime(s.ReportedAt), SinceReportMs: ms(s.SinceReport), Live: s.Live,
		Warning: outboxWarning(s), Relays: make([]outboxRelayView, len(s.Relays))}
	for i, r := range s.Relays {
		v.Relays[i] = outboxRelayView{ID: r.ID, Host: r.Host, PID: r.PID, StartedAt: jsonTime(r.StartedAt),
			ReportedAt: jsonTime(r.ReportedAt), SinceReportMs: ms(r.SinceReport), IntervalMs: ms(r.Interval),
			Moved: r.Moved, Live: r.Live}
	}
	return v
}
