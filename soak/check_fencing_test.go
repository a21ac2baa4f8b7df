//go:build soak

package soak

import (
	"sort"
	"time"
)

// fencingFigures count deliveries around changes of a partition's owner.
type fencingFigures struct {
	inFlightAtTakeover int // handed out before a takeover, handled after it (at most one per takeover)
	staleDeliveries    int // further deliveries of a superseded owner: a failure
}

// partKey is a partition of one group.
type partKey struct {
	group string
	part  int
}

// leaseLog is, per partition of a group, who acquired it when.
type leaseLog struct {
	acquired map[partKey][]event // in time order
}

func newLeaseLog(d *dataset) leaseLog {
	l := leaseLog{acquired: map[partKey][]event{}}
	for _, e := range d.events {
		if e.Ev == evAcquired {
			k := partKey{d.groupOf[e.Proc], e.Part}
			l.acquired[k] = append(l.acquired[k], e)
		}
	}
	return l
}

// holder returns the last acquisition of k at or before t.
func (l leaseLog) holder(k partKey, t int64) (event, bool) {
	acq := l.acquired[k]
	i := sort.Search(len(acq), func(i int) bool { return acq[i].T > t }) - 1
	if i < 0 {
		return event{}, false
	}
	return acq[i], true
}

// checkFencing: a member delivers a partition only while it is the latest to have acquired
// it. Once another member took the partition over, the old owner may still run the handler
// of the one message it had handed out (ordered partitions have one in flight), nothing more.
func checkFencing(d *dataset, v *verdict) fencingFigures {
	var f fencingFigures
	l := newLeaseLog(d)
	late := map[string]int{} // per superseded ownership: deliveries after the takeover
	for _, g := range groups {
		for _, h := range d.handles[g] {
			k := partKey{g, h.Part}
			cur, ok := l.holder(k, h.T)
			switch {
			case !ok:
				v.fail("delivered without a lease", "group %s partition %d: %s delivered %s before anyone acquired it", g, h.Part, h.Proc, h.UUID)
			case cur.Proc != h.Proc:
				episode := h.Proc + "/" + cur.Proc + "/" + time.Unix(0, cur.T).Format(time.RFC3339Nano)
				late[episode]++
				if late[episode] == 1 {
					f.inFlightAtTakeover++
					continue
				}
				f.staleDeliveries++
				v.fail("delivered by a superseded owner", "group %s partition %d: %s delivered seq %d of %s (%s) after %s took the partition over at %s",
					g, h.Part, h.Proc, h.Seq, h.Key, h.UUID, cur.Proc, time.Unix(0, cur.T).Format("15:04:05.000"))
			}
		}
	}
	return f
}
