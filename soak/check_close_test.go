//go:build soak

package soak

import "time"

// closeWindow is how far before its SIGTERM a closed consumer's acks are checked.
const closeWindow = time.Second

// checkClosesKeptAcks: a consumer closed with SIGTERM while messages are in flight drains
// them and flushes their acks before it releases its partitions, so no message it acked in
// its last second is delivered to its group again. Checked for the closes with no other fault
// within a lease TTL before them (Redis and the network healthy, the leases valid).
func checkClosesKeptAcks(d *dataset, v *verdict, faults []fault) (checked, replayed int) {
	for i, f := range faults {
		if f.kind != kindTerm || f.err != nil || disturbed(faults, i) {
			continue
		}
		checked++
		from, to := f.start.Add(-closeWindow).UnixNano(), f.end.UnixNano()
		for _, h := range d.handles[f.group] {
			if h.Proc != f.target || h.Res != resAck || h.T < from || h.T > to {
				continue
			}
			if again, ok := deliveredAgain(d, f.group, h); ok {
				replayed++
				v.fail("acks lost by a graceful Close", "group %s %s seq %d of %s: acked by %s at %s (SIGTERM at %s), delivered again by %s at %s",
					f.group, h.UUID, h.Seq, h.Key, h.Proc, h.time().Format("15:04:05.000"), f.start.Format("15:04:05.000"),
					again.Proc, again.time().Format("15:04:05.000"))
			}
		}
	}
	return checked, replayed
}

// disturbed reports whether another fault was under way within a lease TTL before fault i
// or during it.
func disturbed(faults []fault, i int) bool {
	from := faults[i].start.Add(-leaseTTL - time.Second)
	for j, f := range faults {
		if j != i && f.end.After(from) && f.start.Before(faults[i].end) {
			return true
		}
	}
	return false
}

// deliveredAgain finds a later delivery of the same attempt of h's message in group.
func deliveredAgain(d *dataset, group string, h event) (event, bool) {
	for _, again := range d.byMsg[group][h.UUID] {
		if again.T > h.T && again.Retry == h.Retry {
			return again, true
		}
	}
	return event{}, false
}
