//go:build soak

package soak

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// destroyInFlight is how long before a group destroy, and after the group is back, a
// message's publish or delivery still falls inside the fault's window: an entry may sit in a
// read batch, a handler or an ack batch when the group goes, and reach Redis after it is
// recreated.
const destroyInFlight = time.Second

// destroyWindows are the known-loss windows of the group-destroy faults: per fault, from
// destroyInFlight before the destroy until destroyInFlight after the group was back on every
// partition hit. What the destroyed group lost on a partition hit is counted there, not
// failed, when the message's publish or a delivery to the group falls inside one, or, for a
// payload gone, a delivery to either group (the other group's ack deletes a payload when it
// is the last group on the stream).
type destroyWindows struct {
	faults    []fault
	lost      []int // per fault: messages the group never acked, in the DLQ for a missing payload or not at all
	deadAgain []int // per fault: messages the group acked, dead-lettered on redelivery for a missing payload
	examples  [][]string
}

func newDestroyWindows(faults []fault) *destroyWindows {
	w := &destroyWindows{}
	for _, f := range faults {
		if f.kind == kindDestroy && f.frontiers != nil { // nil: the destroy itself failed
			w.faults = append(w.faults, f)
		}
	}
	w.lost, w.deadAgain = make([]int, len(w.faults)), make([]int, len(w.faults))
	w.examples = make([][]string, len(w.faults))
	return w
}

// covering returns the index of the window of a destroy of group g ("": any group) that
// holds message uuid on partition part, by its publish or its deliveries to the groups
// deliveredTo; -1 when none does.
func (w *destroyWindows) covering(d *dataset, g, uuid string, part int, deliveredTo []string) int {
	for i, f := range w.faults {
		if (g == "" || f.group == g) && slices.Contains(f.hit, part) && inWindow(d, f, uuid, deliveredTo) {
			return i
		}
	}
	return -1
}

// inWindow reports whether message uuid was published, or delivered to one of the groups
// deliveredTo, inside the window of destroy f.
func inWindow(d *dataset, f fault, uuid string, deliveredTo []string) bool {
	from, to := f.start.Add(-destroyInFlight).UnixNano(), f.end.Add(destroyInFlight).UnixNano()
	inside := func(t int64) bool { return t >= from && t <= to }
	if inside(publishedAt(d, uuid)) {
		return true
	}
	for _, g := range deliveredTo {
		if slices.ContainsFunc(d.byMsg[g][uuid], func(h event) bool { return inside(h.T) }) {
			return true
		}
	}
	return false
}

// near names the group destroy whose window holds message uuid on partition part by any
// group's timing ("" when none does): the likely cause of a failure it does not excuse (of
// the control group, or by the destroyed group's timing outside the window).
func (w *destroyWindows) near(d *dataset, uuid string, part int) string {
	if i := w.covering(d, "", uuid, part, groups); i >= 0 {
		f := w.faults[i]
		return fmt.Sprintf(" (near the XGROUP DESTROY of group %s at %s on this partition)", f.group, f.start.Format("15:04:05.000"))
	}
	return ""
}

// publishedAt is when message uuid's Publish returned, with or without an error.
func publishedAt(d *dataset, uuid string) int64 {
	if pub, ok := d.published[uuid]; ok {
		return pub.T
	}
	return d.failed[uuid].T
}

// excuseLost counts a lost message in the window that holds it; false when none does.
func (w *destroyWindows) excuseLost(d *dataset, g, uuid string, pub event) bool {
	i := w.covering(d, g, uuid, pub.Part, []string{g})
	if i >= 0 {
		w.lost[i]++
		w.example(i, "lost: group %s %s key %s seq %d partition %d published at %s: never acked, not in the DLQ (%d deliveries)",
			g, uuid, pub.Key, pub.Seq, pub.Part, pub.time().Format("15:04:05.000"), len(d.byMsg[g][uuid]))
	}
	return i >= 0
}

// excusePayloadGone counts a dead letter of group g whose payload was gone in the window
// that holds its message; false when none does.
func (w *destroyWindows) excusePayloadGone(d *dataset, g string, dl admin.DeadLetter) bool {
	i := w.covering(d, g, dl.UUID, dl.Partition, groups)
	switch {
	case i < 0:
		return false
	case d.acked(g, dl.UUID):
		w.deadAgain[i]++
		w.example(i, "acked, dead-lettered on redelivery: group %s %s partition %d: %s", g, dl.UUID, dl.Partition, dl.Reason)
	default:
		w.lost[i]++
		w.example(i, "lost: group %s %s partition %d, never acked: %s", g, dl.UUID, dl.Partition, dl.Reason)
	}
	return true
}

// example records one of the first maxExamples costs of window i.
func (w *destroyWindows) example(i int, format string, args ...any) {
	if len(w.examples[i]) < maxExamples {
		w.examples[i] = append(w.examples[i], fmt.Sprintf(format, args...))
	}
}

// destroyFigures are what one group destroy cost its group.
type destroyFigures struct {
	fault       fault
	heals       int // heal lines the members logged for the partitions hit
	redelivered int // entries handled before the re-creation and again after it, past its position
	lost        int // see destroyWindows
	deadAgain   int
	examples    []string
}

// checkDestroys: the members recreated the destroyed group on every partition hit, with one
// heal line each, never behind the group's commit frontier at the destroy; no group was
// recreated anywhere else (the control group never). It returns, per destroy, what was
// redelivered and lost (counted in w by checkDelivery).
func checkDestroys(d *dataset, v *verdict, faults []fault, w *destroyWindows) []destroyFigures {
	heals := attributeHeals(d, v, w.faults)
	out := make([]destroyFigures, len(w.faults))
	for i, f := range w.faults {
		out[i] = destroyFigures{fault: f, lost: w.lost[i], deadAgain: w.deadAgain[i], examples: w.examples[i]}
		positions := map[int]string{}
		for j, p := range f.hit {
			hs := heals[i][p]
			out[i].heals += len(hs)
			if len(hs) != 1 {
				v.fail("group recreation not logged once per partition", "group %s partition %d destroyed at %s: %d heal lines",
					f.group, p, f.start.Format("15:04:05.000"), len(hs))
			}
			if len(hs) == 0 {
				continue
			}
			positions[p] = hs[0].ID
			if fr := f.frontiers[j]; fr != "" && streamid.Less(hs[0].ID, fr) {
				v.fail("group recreated behind its commit frontier", "group %s partition %d: %s recreated it at %s, the frontier was %s at the destroy",
					f.group, p, hs[0].Proc, hs[0].ID, fr)
			}
		}
		out[i].redelivered = redeliveredAfter(d, f, positions, nextStart(faults, f))
	}
	return out
}

// attributeHeals files every heal line under the last destroy of its group and partition
// before it (per window, per partition), and fails the ones that follow no destroy.
func attributeHeals(d *dataset, v *verdict, windows []fault) []map[int][]event {
	out := make([]map[int][]event, len(windows))
	for i := range out {
		out[i] = map[int][]event{}
	}
	for _, e := range d.events {
		if e.Ev != evHealed {
			continue
		}
		g, last := d.groupOf[e.Proc], -1
		for i, f := range windows {
			if f.group == g && slices.Contains(f.hit, e.Part) && !f.start.After(e.time()) {
				last = i
			}
		}
		if last < 0 {
			v.fail("group recreated without a destroy", "group %s partition %d: %s recreated it at %s (%s)",
				g, e.Part, e.Proc, e.ID, e.time().Format("15:04:05.000"))
			continue
		}
		out[last][e.Part] = append(out[last][e.Part], e)
	}
	return out
}

// redeliveredAfter counts the entries of the partitions hit that the group handled before it
// was back and again after, until the next fault: past the position it was recreated at.
func redeliveredAfter(d *dataset, f fault, positions map[int]string, until time.Time) int {
	before, again := map[string]bool{}, map[string]bool{}
	for _, h := range d.handles[f.group] {
		pos, hit := positions[h.Part]
		entry := fmt.Sprintf("%d/%s", h.Part, h.ID) // ids are per partition stream
		switch {
		case !hit || !streamid.Less(pos, h.ID):
		case h.T <= f.end.UnixNano():
			before[entry] = true
		case h.T < until.UnixNano() && before[entry]:
			again[entry] = true
		}
	}
	return len(again)
}

// nextStart is when the fault after f started (the far future for the last one).
func nextStart(faults []fault, f fault) time.Time {
	for _, g := range faults {
		if g.start.After(f.start) {
			return g.start
		}
	}
	return time.Unix(1<<40, 0)
}
