package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// dlqFilter is the filter "dlq list" and "dlq replay-all" share: the group that failed the
// letter, a part of its reason, its partition, and when it failed.
type dlqFilter struct {
	group          string
	reasonContains string
	partition      int // -1: every partition
	failedWithin   time.Duration
	failedBefore   time.Duration // failed at least this long ago
}

// addFlags registers the filter's flags on cmd.
func (f *dlqFilter) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "only dead letters that failed in this consumer group")
	fl.StringVar(&f.reasonContains, "reason-contains", "", "only dead letters whose reason contains this")
	fl.IntVar(&f.partition, "partition", -1, "only dead letters of this partition")
	durationVar(fl, &f.failedWithin, "failed-within", 0, "only dead letters that failed within this long, e.g. 1h or 2d")
	durationVar(fl, &f.failedBefore, "failed-before", 0, "only dead letters that failed at least this long ago, e.g. 24h or 7d")
}

// check refuses negative durations.
func (f *dlqFilter) check() error {
	if f.failedWithin < 0 || f.failedBefore < 0 {
		return usageErrorf("--failed-within and --failed-before must not be negative")
	}
	return nil
}

// set reports whether any filter is given.
func (f *dlqFilter) set() bool {
	return f.group != "" || f.reasonContains != "" || f.partition >= 0 || f.failedWithin > 0 || f.failedBefore > 0
}

// match reports whether d passes the filter at now.
func (f *dlqFilter) match(d admin.DeadLetter, now time.Time) bool {
	switch {
	case f.group != "" && d.Group != f.group:
	case !strings.Contains(d.Reason, f.reasonContains):
	case f.partition >= 0 && d.Partition != f.partition:
	case f.failedWithin > 0 && d.FailedAt.Before(now.Add(-f.failedWithin)):
	case f.failedBefore > 0 && d.FailedAt.After(now.Add(-f.failedBefore)):
	default:
		return true
	}
	return false
}

// text describes the filter for a confirmation ("" when none).
func (f *dlqFilter) text() string {
	var parts []string
	if f.group != "" {
		parts = append(parts, fmt.Sprintf("of group %q", f.group))
	}
	if f.reasonContains != "" {
		parts = append(parts, fmt.Sprintf("with a reason containing %q", f.reasonContains))
	}
	if f.partition >= 0 {
		parts = append(parts, fmt.Sprintf("of partition %d", f.partition))
	}
	if f.failedWithin > 0 {
		parts = append(parts, fmt.Sprintf("failed within %s", f.failedWithin))
	}
	if f.failedBefore > 0 {
		parts = append(parts, fmt.Sprintf("failed over %s ago", f.failedBefore))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (only those " + strings.Join(parts, " and ") + ")"
}
