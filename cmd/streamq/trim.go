package main

import (
	"context"
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

// trimLong is the long help of trim.
const trimLong = `Removes entries from a topic, ignoring consumer groups: entries not yet delivered or acked
are removed too.

  --maxlen N        keeps the newest ceil(N/partitions) entries of each partition (XTRIM)
  --older-than AGE  removes entries older than AGE (by their id time, against the Redis
                    server's clock), a page of --page-size entries at a time (XRANGE + XDEL),
                    with a progress line on a terminal`

// trimOpts are the flags of trim.
type trimOpts struct {
	a         *app
	maxLen    int64
	olderThan time.Duration
	pageSize  int
}

// trimCmd is "streamq trim".
func trimCmd(a *app) *cobra.Command {
	o := &trimOpts{a: a}
	cmd := &cobra.Command{
		Use:   "trim TOPIC (--maxlen N | --older-than AGE)",
		Short: "Remove a topic's oldest entries, by count or by age",
		Long:  trimLong,
		Example: `  streamq trim orders --maxlen 100000
  streamq trim orders --older-than 24h --yes`,
		GroupID:           groupTopics,
		Args:              argsExactly("TOPIC"),
		ValidArgsFunction: a.completeArgs(argTopic),
		RunE:              a.runE(o.run),
	}
	f := cmd.Flags()
	f.Int64Var(&o.maxLen, "maxlen", 0, "keep at most N entries in total (amortized over partitions)")
	durationVar(f, &o.olderThan, "older-than", 0, "remove entries older than this, e.g. 1d, 36h or 90m")
	f.IntVar(&o.pageSize, "page-size", admin.DefaultTrimPageSize, "entries per XRANGE+XDEL step with --older-than")
	a.addYesFlag(cmd)
	a.addJSONFlag(cmd)
	return cmd
}

// validate checks the flags of cmd (a usage error unless exactly one of --maxlen and
// --older-than is given, in range) and reports whether the trim is by length.
func (o *trimOpts) validate(cmd *cobra.Command) (byLen bool, err error) {
	byLen, byAge := cmd.Flags().Changed("maxlen"), cmd.Flags().Changed("older-than")
	switch {
	case byLen && byAge:
		return false, usageErrorf("--maxlen and --older-than are two ways to trim, by count (keep the newest N entries) " +
			"or by age (remove the entries older than AGE): give one of them")
	case !byLen && !byAge:
		return false, usageErrorf("say what to remove: --maxlen N keeps the newest N entries, --older-than AGE removes " +
			"the entries older than AGE (e.g. 1d)")
	case byLen && o.maxLen < 0:
		return false, usageErrorf("--maxlen must not be negative, got %d", o.maxLen)
	case byAge && o.olderThan <= 0:
		return false, usageErrorf("--older-than must be positive, got %s", o.olderThan)
	case o.pageSize < 1:
		return false, usageErrorf("--page-size must be at least 1, got %d", o.pageSize)
	case byLen && cmd.Flags().Changed("page-size"):
		return false, usageErrorf("--page-size sets the entries removed per step with --older-than; --maxlen trims in one step per partition")
	}
	return byLen, nil
}

// run runs trim: it checks the flags and the topic, trims by length or by age and prints
// how many entries were removed.
func (o *trimOpts) run(cmd *cobra.Command, args []string) error {
	byLen, err := o.validate(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	adm, err := o.a.admin(ctx)
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
		err = o.trimToLen(ctx, adm, q, &v)
	} else {
		err = o.trimByAge(ctx, adm, q, &v)
	}
	if err != nil {
		return err
	}
	if o.a.json {
		return printJSON(o.a.stdout, v)
	}
	fmt.Fprintf(o.a.stdout, "removed %s from topic %q\n", plural(v.Removed, "entry", "entries"), topic)
	return nil
}

// trimToLen asks for confirmation and trims the topic of q to --maxlen entries, recording
// the trim in v.
func (o *trimOpts) trimToLen(ctx context.Context, adm *admin.Admin, q admin.QueueInfo, v *trimView) error {
	what := fmt.Sprintf("trim topic %q (%d partitions, %s) to at most %d entries, about %d per partition, including entries not yet consumed",
		v.Topic, q.Partitions, plural(q.Entries, "entry", "entries"), o.maxLen, (o.maxLen+int64(q.Partitions)-1)/int64(q.Partitions))
	if err := o.a.confirm(ctx, what); err != nil {
		return err
	}
	v.MaxLen = &o.maxLen
	var err error
	v.Removed, err = adm.Trim(ctx, v.Topic, o.maxLen)
	return trimFailed(err, v.Removed)
}

// trimByAge asks for confirmation and removes the entries of the topic of q older than
// --older-than, a page at a time with a progress line, recording the trim in v.
func (o *trimOpts) trimByAge(ctx context.Context, adm *admin.Admin, q admin.QueueInfo, v *trimView) error {
	what := fmt.Sprintf("remove the entries of topic %q (%d partitions, %s) older than %s, including entries not yet consumed",
		v.Topic, q.Partitions, plural(q.Entries, "entry", "entries"), o.olderThan)
	if err := o.a.confirm(ctx, what); err != nil {
		return err
	}
	age := ms(o.olderThan)
	v.OlderThanMs = &age
	est, err := adm.EstimateTrimByAge(ctx, v.Topic, o.olderThan)
	if err != nil {
		return err
	}
	bar := o.a.startProgressAbout("trimming", "entries removed", est.Entries, !est.Exact)
	v.Removed, err = adm.TrimByAge(ctx, v.Topic, o.olderThan, admin.TrimOptions{PageSize: o.pageSize, Progress: bar.set})
	bar.done()
	return trimFailed(err, v.Removed)
}

// trimFailed wraps the error of a trim with how many entries it removed before it (nil
// when err is nil).
func trimFailed(err error, removed int64) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (removed %s before the error)", err, plural(removed, "entry", "entries"))
}
