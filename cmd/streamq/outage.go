package main

import (
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// outageView is admin.Outage.
type outageView struct {
	Member    string `json:"member"`
	Since     string `json:"since"`
	NextProbe string `json:"nextProbe"`
	Probes    int    `json:"probesFailed"`
	Reason    string `json:"reason"`
}

func newOutageView(o *admin.Outage) *outageView {
	if o == nil {
		return nil
	}
	return &outageView{Member: o.Member, Since: rfc3339(o.Since), NextProbe: rfc3339(o.NextProbe), Probes: o.Probes, Reason: o.Reason}
}

// outageLines are stats' lines of the partitions waiting out a downstream outage, at now:
// "partition 2 paused: downstream failing since … (2m0s), next probe in 8s, 3 probes
// failed (worker-1): reason".
func (a *app) outageLines(s admin.GroupStats, now time.Time) []string {
	var out []string
	for _, p := range s.Partitions {
		o := p.Outage
		if o == nil {
			continue
		}
		probe := "probing now"
		if next := o.NextProbe.Sub(now).Round(time.Second); next > 0 {
			probe = "next probe in " + next.String()
		}
		out = append(out, fmt.Sprintf("partition %d paused: downstream failing since %s (%s), %s, %d probes failed (%s): %s",
			p.Partition, a.timeText(o.Since), now.Sub(o.Since).Round(time.Second), probe, o.Probes, o.Member, o.Reason))
	}
	return out
}
