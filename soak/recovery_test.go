//go:build soak

package soak

import (
	"sort"
	"time"
)

// recovery is how long one fault kept its partitions from delivering.
type recovery struct {
	fault fault
	took  time.Duration
	ok    bool // every affected partition delivered again
}

// acksByPartition lists the times of acked deliveries of every partition of every group.
func acksByPartition(d *dataset) map[partKey][]event {
	out := map[partKey][]event{}
	for _, g := range groups {
		for _, h := range d.handles[g] {
			if h.Res == resAck {
				k := partKey{g, h.Part}
				out[k] = append(out[k], h)
			}
		}
	}
	return out
}

// measureRecovery times each fault. A consumer fault (kill, stop, term, cut of one) counts
// from its start until every partition its target held delivered a message again through
// another member (or through the target itself once the fault ended): the takeover time. A
// fault of Redis or of everyone's network counts from its end (Redis answering again, the
// network back) until every partition of both groups delivered a message again. A group
// destroy counts from the destroy until every partition hit delivered a message after the
// group was back on all of them.
func measureRecovery(d *dataset, faults []fault) []recovery {
	acks := acksByPartition(d)
	out := make([]recovery, 0, len(faults))
	for _, f := range faults {
		from, since, affected := f.end, f.end, allPartitions()
		switch {
		case f.kind == kindDestroy:
			from, affected = f.start, partsOf(f.group, f.hit)
		case f.target != "":
			from, since, affected = f.start, f.start, partsOf(f.group, f.owned)
		}
		r := recovery{fault: f, ok: true}
		for _, k := range affected {
			t, found := firstDelivery(acks[k], f, since)
			if !found {
				r.ok = false
				continue
			}
			r.took = max(r.took, t.Sub(from))
		}
		out = append(out, r)
	}
	return out
}

func partsOf(group string, parts []int) []partKey {
	out := make([]partKey, len(parts))
	for i, p := range parts {
		out[i] = partKey{group, p}
	}
	return out
}

func allPartitions() []partKey {
	var out []partKey
	for _, g := range groups {
		for p := 0; p < partitions; p++ {
			out = append(out, partKey{g, p})
		}
	}
	return out
}

// firstDelivery finds the first acked delivery after from that shows recovery from f: not
// by f's target while the fault lasted.
func firstDelivery(acks []event, f fault, from time.Time) (time.Time, bool) {
	i := sort.Search(len(acks), func(i int) bool { return acks[i].T > from.UnixNano() })
	for ; i < len(acks); i++ {
		a := acks[i]
		if a.Proc != f.target || a.T > f.end.UnixNano() {
			return a.time(), true
		}
	}
	return time.Time{}, false
}

// stall is the longest time a partition of a group went without an acked delivery while
// messages were being published.
type stall struct {
	part     partKey
	from, to time.Time
}

func (s stall) length() time.Duration { return s.to.Sub(s.from) }

func longestStall(d *dataset, from, to time.Time) stall {
	var worst stall
	for k, acks := range acksByPartition(d) {
		prev := from
		for _, a := range acks {
			if a.T < from.UnixNano() || a.T > to.UnixNano() {
				continue
			}
			if s := (stall{k, prev, a.time()}); s.length() > worst.length() {
				worst = s
			}
			prev = a.time()
		}
	}
	return worst
}
