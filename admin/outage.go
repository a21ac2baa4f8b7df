package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/outage"
)

// Outage is a partition whose lease holder waits out a downstream outage for its group
// (streamq.Outage, RetryConfig.Outage): it hands out no message until a probe (its held
// message, delivered again) succeeds.
type Outage struct {
	Partition int
	// Member is the lease holder that waits.
	Member string
	// Since is when the outage's first failure came; NextProbe when the held message is
	// delivered again; Probes how many probes failed so far.
	Since     time.Time
	NextProbe time.Time
	Probes    int
	// Reason is the last failure's reason.
	Reason string
}

// String is "downstream failing since 15:04:05 (2m0s), next probe in 8s: reason", at now.
func (o Outage) String() string { return o.At(time.Now()) }

// At is String at now.
func (o Outage) At(now time.Time) string {
	next := o.NextProbe.Sub(now).Round(time.Second)
	probe := fmt.Sprintf("next probe in %s", max(next, 0))
	if next <= 0 {
		probe = "probing"
	}
	return fmt.Sprintf("downstream failing since %s (%s), %s, %d probes failed: %s",
		o.Since.Local().Format(time.TimeOnly), now.Sub(o.Since).Round(time.Second), probe, o.Probes, o.Reason)
}

// Outages are the partitions waiting out a downstream outage, by group, of every group of
// lag (as TopicLag read it) on the partitions where it exists, in partition order; one
// pipeline.
func (a *Admin) Outages(ctx context.Context, lag TopicLag) (map[string][]Outage, error) {
	var keys []string
	type at struct {
		group     string
		partition int
	}
	var where []at
	for _, g := range lag.Groups {
		for _, p := range g.Partitions {
			keys = append(keys, a.space.Outage(lag.Topic, p.Partition, g.Group))
			where = append(where, at{g.Group, p.Partition})
		}
	}
	recs, err := outage.Read(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	out := map[string][]Outage{}
	for i, r := range recs {
		if o := outageOf(where[i].partition, r); o != nil {
			out[where[i].group] = append(out[where[i].group], *o)
		}
	}
	return out, nil
}

// outageOf is the Outage of partition p that r records; nil when r is.
func outageOf(p int, r *outage.Record) *Outage {
	if r == nil {
		return nil
	}
	return &Outage{Partition: p, Member: r.Member, Since: r.Since, NextProbe: r.NextProbe, Probes: r.Probes, Reason: r.Reason}
}
