package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
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

// String is "downstream failing since 2026-12-03 12:00:00 UTC (2m0s), next probe in 8s, 5 probes
// failed: reason", at now; the time in UTC, as every admin text.
func (o Outage) String() string { return o.At(time.Now()) }

// At is String at now.
func (o Outage) At(now time.Time) string {
	next := o.NextProbe.Sub(now).Round(time.Second)
	probe := fmt.Sprintf("next probe in %s", max(next, 0))
	if next <= 0 {
		probe = "probing"
	}
	return fmt.Sprintf("downstream failing since %s (%s), %s, %d probes failed: %s",
		timeText(o.Since), now.Sub(o.Since).Round(time.Second), probe, o.Probes, o.Reason)
}

// GroupOutages are a group's partitions waiting out a downstream outage, and those whose
// outage state is unknown.
type GroupOutages struct {
	Outages []Outage // in partition order
	// Unknown are the partitions with no outage record where Redis refuses that record's
	// write (PartitionGroupStats.OutageUnknown), in order; Refused is Redis's answer.
	Unknown []int
	Refused error
}

// Outages reads the outage state of every group of lag (as TopicLag read it) on the
// partitions where it exists: the partitions waiting out a downstream outage, and those whose
// state is unknown because Redis refuses writes; one pipeline. A group with neither is
// missing.
func (a *Admin) Outages(ctx context.Context, lag TopicLag) (map[string]GroupOutages, error) {
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
	states, err := inspect.Outages(ctx, a.rdb, keys)
	if err != nil {
		return nil, err
	}
	out := map[string]GroupOutages{}
	for i, s := range states {
		g, p := where[i].group, where[i].partition
		if o := outageOf(p, s.Record); o != nil {
			out[g] = out[g].with(*o)
		} else if s.WriteRefused != nil {
			out[g] = out[g].unknown(p, s.WriteRefused)
		}
	}
	return out, nil
}

func (g GroupOutages) with(o Outage) GroupOutages {
	g.Outages = append(g.Outages, o)
	return g
}

func (g GroupOutages) unknown(p int, refused error) GroupOutages {
	g.Unknown, g.Refused = append(g.Unknown, p), refused
	return g
}

// ErrWritesRefused reports that Redis refuses the writes of the drain steps (OOM on a server
// that cannot run them at maxmemory, MISCONF, NOREPLICAS, READONLY): a partition with no
// outage record may still be waiting out an outage its lease holder could not record.
var ErrWritesRefused = outage.ErrRefused

// OutageUnknownText is what the tools say of a partition whose outage state is unknown
// (PartitionGroupStats.OutageUnknown).
const OutageUnknownText = "outage state unknown: Redis refuses writes"

// outageUnknown is why part's outage state is unknown: no record, and Redis refuses the
// record's write; nil when it is known.
func outageUnknown(part inspect.GroupPartition) error {
	if part.Outage != nil || part.WriteRefused == nil {
		return nil
	}
	return part.WriteRefused
}

// outageOf is the Outage of partition p that r records; nil when r is.
func outageOf(p int, r *outage.Record) *Outage {
	if r == nil {
		return nil
	}
	return &Outage{Partition: p, Member: r.Member, Since: r.Since, NextProbe: r.NextProbe, Probes: r.Probes, Reason: r.Reason}
}
