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

// addOutages reads the outage record of group on each of parts.
func (a *Admin) addOutages(ctx context.Context, topic, group string, parts []PartitionGroupStats) error {
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = a.space.Outage(topic, p.Partition, group)
	}
	recs, err := outage.Read(ctx, a.rdb, keys)
	if err != nil {
		return err
	}
	for i, r := range recs {
		if r != nil {
			parts[i].Outage = outageOf(parts[i].Partition, r)
		}
	}
	return nil
}

// Outages are the partitions of topic waiting out a downstream outage, by group, for each of
// groups (the groups of admin.TopicLag), in partition order; one pipeline over every group
// and partition.
func (a *Admin) Outages(ctx context.Context, topic string, groups []string) (map[string][]Outage, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, n*len(groups))
	for _, g := range groups {
		for p := range n {
			keys = append(keys, a.space.Outage(topic, p, g))
		}
	}
	recs, err := outage.Read(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	out := map[string][]Outage{}
	for i, r := range recs {
		if r != nil {
			g := groups[i/n]
			out[g] = append(out[g], *outageOf(i%n, r))
		}
	}
	return out, nil
}

func outageOf(p int, r *outage.Record) *Outage {
	return &Outage{Partition: p, Member: r.Member, Since: r.Since, NextProbe: r.NextProbe, Probes: r.Probes, Reason: r.Reason}
}
