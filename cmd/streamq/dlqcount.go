package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamq-dev/streamq/admin"
)

// dlqCountsView is "dlq list --count-by KEY --json": admin.DLQCounts.
type dlqCountsView struct {
	Topic string `json:"topic"`
	By    string `json:"by"` // reason, group or partition
	// Letters is how many letters matched; Keys how many distinct keys they have; Others how
	// many letters are under the keys beyond Counts (--limit).
	Letters int64 `json:"letters"`
	Keys    int   `json:"keys"`
	Others  int64 `json:"others"`
	// Scanned is how many letters were read; Truncated that the read stopped before the end.
	Scanned   int            `json:"scanned"`
	Truncated bool           `json:"truncated"`
	Counts    []dlqCountView `json:"counts"`
}

type dlqCountView struct {
	Key     string   `json:"key"` // the reason, the group ("" for none) or the partition number
	Letters int64    `json:"letters"`
	Oldest  jsonTime `json:"oldest"` // the oldest and the newest failure counted
	Newest  jsonTime `json:"newest"`
}

// countByKeys are the values of --count-by.
var countByKeys = map[string]admin.DLQCountKey{
	"reason": admin.CountByReason, "group": admin.CountByGroup, "partition": admin.CountByPartition,
}

// count runs "dlq list --count-by": the letters that pass the filters, counted by key.
func (o *dlqListOpts) count(ctx context.Context, adm *admin.Admin, topic string) error {
	by, ok := countByKeys[o.countBy]
	if !ok {
		return usageErrorf("--count-by takes reason, group or partition, got %q", o.countBy)
	}
	if o.oldestFirst {
		return usageErrorf("--count-by and --oldest-first: counts are ordered by size")
	}
	now, f := time.Now(), o.filter
	q := admin.DLQCountQuery{By: by, Group: f.group, Top: o.limit,
		Keep: func(b admin.DeadLetterBrief) bool {
			return f.match(admin.DeadLetter{Partition: b.Partition, Reason: b.Reason, Group: b.Group, FailedAt: b.FailedAt}, now)
		}}
	if f.partition >= 0 {
		q.Partitions = []int{f.partition}
	}
	if f.failedBefore > 0 {
		q.Until = now.Add(-f.failedBefore)
	}
	c, err := adm.CountDeadLetters(ctx, topic, q)
	if err != nil {
		return err
	}
	if o.a.json {
		return printJSON(o.a.stdout, newDLQCountsView(c))
	}
	return o.printCounts(c)
}

func newDLQCountsView(c admin.DLQCounts) dlqCountsView {
	v := dlqCountsView{Topic: c.Topic, By: string(c.By), Letters: c.Letters, Keys: c.Keys, Others: c.Others,
		Scanned: c.Scanned, Truncated: c.Truncated, Counts: []dlqCountView{}}
	for _, n := range c.Counts {
		v.Counts = append(v.Counts, dlqCountView{Key: n.Key, Letters: n.Letters, Oldest: jsonTime(n.Oldest), Newest: jsonTime(n.Newest)})
	}
	return v
}

// printCounts writes the counts as a table, the largest first, and what they add up to.
func (o *dlqListOpts) printCounts(c admin.DLQCounts) error {
	w := o.a.stdout
	if c.Letters == 0 {
		fmt.Fprintf(w, "topic %q has no dead letters%s\n", c.Topic, o.filter.text())
		return nil
	}
	key := map[admin.DLQCountKey]string{admin.CountByReason: "REASON", admin.CountByGroup: "GROUP", admin.CountByPartition: "PARTITION"}[c.By]
	var t *table
	if o.a.wide {
		t = newTable(w, "LETTERS", "OLDEST FAILURE", "NEWEST FAILURE", key)
	} else {
		t = newTable(w, "LETTERS", "NEWEST FAILURE", key).fitWrapped(o.a.width(), 2)
	}
	for _, n := range c.Counts {
		k := n.Key
		if k == "" {
			k = "(none)"
		}
		if o.a.wide {
			t.row(n.Letters, o.a.timeText(n.Oldest), o.a.timeText(n.Newest), k)
		} else {
			t.row(n.Letters, o.a.timeText(n.Newest), k)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	return o.printCountsTotal(c)
}

// printCountsTotal says what the counts add up to, what --limit left out, and whether the
// read stopped early.
func (o *dlqListOpts) printCountsTotal(c admin.DLQCounts) error {
	keys := map[admin.DLQCountKey][2]string{admin.CountByReason: {"reason", "reasons"}, admin.CountByGroup: {"group", "groups"},
		admin.CountByPartition: {"partition", "partitions"}}[c.By]
	line := fmt.Sprintf("%s, %s", plural(c.Letters, "dead letter", "dead letters"), plural(int64(c.Keys), keys[0], keys[1]))
	if c.Others > 0 {
		line += fmt.Sprintf("; %s with %s not shown (--limit)",
			plural(int64(c.Keys-len(c.Counts)), "more "+keys[0], "more "+keys[1]), plural(c.Others, "letter", "letters"))
	}
	if c.Truncated {
		line += fmt.Sprintf("; counted the newest %d read, the DLQ holds more", c.Scanned)
	}
	_, err := fmt.Fprintln(o.a.stdout, line)
	return err
}

// addCountFlag adds --count-by to dlq list.
func (o *dlqListOpts) addCountFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.countBy, "count-by", "", "count the dead letters by reason, group or partition instead of listing them (largest first; --limit counts shown)")
}
