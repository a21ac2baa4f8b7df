//go:build soak

package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// figures are the results of a run.
type figures struct {
	published, pubFailed, torn int
	pubAttemptsFailed          int // Publish calls' messages that returned an error, each attempt
	republished                int // messages whose Publish failed, then returned nil when sent again
	appendedTwice              int
	delivery                   deliveryFigures
	order                      orderFigures
	fencing                    fencingFigures
	closesChecked, acksLost    int
	handles                    map[string]int
	dlq                        map[string]int
	recoveries                 []recovery
	destroys                   []destroyFigures
	memory                     []memoryEffect
	stall                      stall
	elapsed                    time.Duration
	lagClaims                  []string // admin lag reported for caught-up partitions
}

// analyse runs every check on the dataset.
func analyse(d *dataset, v *verdict, faults []fault, begin time.Time) figures {
	f := figures{published: len(d.published), pubFailed: len(d.failed), torn: d.torn,
		handles: map[string]int{}, dlq: d.dlqCount}
	for g, hs := range d.handles {
		f.handles[g] = len(hs)
	}
	f.pubAttemptsFailed, f.republished = publishRetries(d)
	windows := newDestroyWindows(faults)
	f.delivery = checkDelivery(d, v, windows)
	f.appendedTwice = appendedTwice(d)
	f.order = checkOrder(d, v)
	f.fencing = checkFencing(d, v)
	f.closesChecked, f.acksLost = checkClosesKeptAcks(d, v, faults)
	f.destroys = checkDestroys(d, v, faults, windows)
	f.memory = checkMemory(d, v, faults)
	f.recoveries = measureRecovery(d, faults)
	for _, r := range f.recoveries {
		if !r.ok {
			v.fail("partitions that never recovered", "after %s at %s", r.fault.kind, r.fault.start.Format("15:04:05.000"))
		}
	}
	last := begin
	for _, p := range d.published {
		last = maxTime(last, p.time())
	}
	f.stall = longestStall(d, begin.Add(warmup), last)
	f.elapsed = last.Sub(begin)
	return f
}

// publishRetries counts the failed publish attempts (per message) and the messages that
// failed, then were published when sent again.
func publishRetries(d *dataset) (attempts, republished int) {
	for _, e := range d.events {
		if e.Ev == evPubFailed {
			attempts++
		}
	}
	for uuid := range d.failed {
		if _, ok := d.published[uuid]; ok {
			republished++
		}
	}
	return attempts, republished
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// report prints the figures and the verdict, writes them to figures.txt in dir, and fails
// t when a check failed.
func report(t *testing.T, dir string, seed int64, f figures, v *verdict) {
	var b strings.Builder
	writeFigures(&b, seed, f)
	writeFaults(&b, f.recoveries)
	writeDestroys(&b, f.destroys)
	writeMemory(&b, f.memory)
	switch {
	case v.ok() && windowLosses(f.destroys) > 0:
		fmt.Fprintf(&b, "\nPASS: no message lost and no payload missing outside the group-destroy windows (%d inside them: above), order and fencing held\n",
			windowLosses(f.destroys))
	case v.ok():
		b.WriteString("\nPASS: no message lost, no payload missing, order and fencing held\n")
	default:
		b.WriteString("\n" + v.String())
		fmt.Fprintf(&b, "reproduce: go test -tags soak -run TestSoak ./soak -v -timeout 30m -soak.seed=%d -soak.duration=%s -soak.publishers=%d -soak.consumers=%d -soak.rate=%d -soak.gap=%s\n",
			seed, *flagDuration, *flagPublishers, *flagConsumers, *flagRate, *flagGap)
	}
	fmt.Print(b.String())
	if err := os.WriteFile(filepath.Join(dir, "figures.txt"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("write figures: %v", err)
	}
	if !v.ok() {
		t.Fatalf("soak failed (ledgers and logs in %s)", dir)
	}
}

func writeFigures(b *strings.Builder, seed int64, f figures) {
	fmt.Fprintf(b, "\nstreamq soak, seed %d: %s of publishing, %d publishers x %d msg/s, %d partitions, 2 groups x %d consumers\n\n",
		seed, f.elapsed.Round(time.Second), *flagPublishers, *flagRate, partitions, *flagConsumers)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "messages published (Publish returned nil)\t%d\t\n", f.published)
	fmt.Fprintf(w, "  of which offloaded (payload > 64 KiB)\t%d\t\n", f.delivery.offloaded)
	fmt.Fprintf(w, "messages whose Publish returned an error (sent again)\t%d\t\n", f.pubFailed)
	fmt.Fprintf(w, "  published when sent again\t%d\t\n", f.republished)
	fmt.Fprintf(w, "  failed attempts, per message\t%d\t\n", f.pubAttemptsFailed)
	fmt.Fprintf(w, "messages appended twice (the client retried after losing the reply)\t%d\t\n", f.appendedTwice)
	fmt.Fprintf(w, "torn ledger lines (process killed mid-write)\t%d\t\n", f.torn)
	w.Flush()
	fmt.Fprintln(b)
	w = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "per group\t%s\t\n", strings.Join(groups, "\t"))
	row := func(name string, m map[string]int) {
		cells := make([]string, len(groups))
		for i, g := range groups {
			cells[i] = fmt.Sprint(m[g])
		}
		fmt.Fprintf(w, "%s\t%s\t\n", name, strings.Join(cells, "\t"))
	}
	row("handler deliveries", f.handles)
	row("messages acked", f.delivery.handledOnce)
	row("messages dead-lettered (as the handlers asked)", f.delivery.deadLettered)
	row("DLQ entries", f.dlq)
	row("lost", f.delivery.lost)
	lostIn, deadAgain := destroyCosts(f.destroys)
	row("lost in a group-destroy window (reported, not failed)", lostIn)
	row("  acked, then dead-lettered on redelivery: payload gone", deadAgain)
	row("duplicate deliveries", f.order.duplicates)
	row("order breaks: retried message", f.order.byRetry)
	row("order breaks: across an owner change", f.order.byOwner)
	row("order breaks: entry stranded in a pending list", f.order.stranded)
	row("order breaks: unexplained", f.order.unexplained)
	w.Flush()
	fmt.Fprintln(b)
	w = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "handled by the old owner after a takeover: the one in flight\t%d\t\n", f.fencing.inFlightAtTakeover)
	fmt.Fprintf(w, "handled by the old owner after a takeover: more (fencing failure)\t%d\t\n", f.fencing.staleDeliveries)
	fmt.Fprintf(w, "acked in the last second before a SIGTERM Close, delivered again (%d closes checked)\t%d\t\n", f.closesChecked, f.acksLost)
	fmt.Fprintf(w, "longest time a partition went without a delivery\t%s\t\n", f.stall.length().Round(time.Millisecond))
	w.Flush()
	if f.stall.length() > 0 {
		fmt.Fprintf(b, "  (%s partition %d, %s to %s)\n", f.stall.part.group, f.stall.part.part,
			f.stall.from.Format("15:04:05.000"), f.stall.to.Format("15:04:05.000"))
	}
	if len(f.lagClaims) > 0 {
		fmt.Fprintf(b, "note: after the drain admin.GroupStats still reported a lag for %d caught-up partitions (%s ...): Redis's XINFO GROUPS lag\n",
			len(f.lagClaims), f.lagClaims[0])
	}
}

// writeFaults prints, per fault kind, how often it was injected and the longest and median
// recovery (see measureRecovery).
func writeFaults(b *strings.Builder, rs []recovery) {
	byKind := map[string][]time.Duration{}
	for _, r := range rs {
		if r.ok && r.fault.err == nil {
			byKind[r.fault.kind] = append(byKind[r.fault.kind], r.took)
		}
	}
	fmt.Fprintln(b, "\nrecovery: consumer faults from the fault's start until another member delivered every partition the")
	fmt.Fprintln(b, "target held; Redis and everyone's network from the fault's end until every partition of both groups delivered;")
	fmt.Fprintln(b, "a group destroy from the destroy until every partition hit delivered after the group was recreated")
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "fault\tinjected\tmax recovery\tmedian\t\n")
	for _, k := range faultKinds {
		ds := byKind[k.name]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		if len(ds) == 0 {
			fmt.Fprintf(w, "%s\t0\t-\t-\t\n", k.name)
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t\n", k.name, len(ds), secs(ds[len(ds)-1]), secs(ds[len(ds)/2]))
	}
	w.Flush()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// writeDestroys prints, per group destroy, the partitions hit, how long the group was gone,
// the heal lines, what was delivered again after the re-creation and what was lost in the
// window.
func writeDestroys(b *strings.Builder, ds []destroyFigures) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(b, "\ngroup destroy: XGROUP DESTROY of group %s under its running members (the other group is the control); from %s\n", destroyGroup, destroyInFlight)
	fmt.Fprintf(b, "before the destroy until %s after the group was back on every partition hit is a known-loss window: reported, not failed\n", destroyInFlight)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "destroyed at\tpartitions hit\tgone for\theal lines\tredelivered after re-creation\tlost in the window\tacked, dead-lettered on redelivery\t\n")
	for _, d := range ds {
		fmt.Fprintf(w, "%s\t%d of %d\t%s\t%d\t%d\t%d\t%d\t\n", d.fault.start.Format("15:04:05.000"), len(d.fault.hit), partitions,
			secs(d.fault.end.Sub(d.fault.start)), d.heals, d.redelivered, d.lost, d.deadAgain)
	}
	w.Flush()
	for _, d := range ds {
		for _, e := range d.examples {
			fmt.Fprintf(b, "  %s %s\n", d.fault.start.Format("15:04:05.000"), e)
		}
	}
}

// writeMemory prints, per memory fault, the publishes Redis refused as full, for how long,
// and what became of the messages refused.
func writeMemory(b *strings.Builder, ms []memoryEffect) {
	if len(ms) == 0 {
		return
	}
	fmt.Fprintf(b, "\nmemory pressure: maxmemory %d KiB above used memory (noeviction) for %s, then restored; publishers send a refused message again\n"+
		"(published meanwhile: accepted while the fault lasted, whenever acks and expiries freed memory below the limit)\n",
		memoryMargin>>10, memoryFor)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "fault at\tattempts refused (per message)\tmessages refused\tfirst refusal\trefused for\tpublished meanwhile\tpublished again after\tpublished in the end\tnever published\t\n")
	for _, m := range ms {
		first, again := "-", "-"
		if m.refused > 0 {
			first = "+" + secs(m.firstRefused.Sub(m.fault.start))
		}
		if !m.resumed.IsZero() {
			again = "+" + secs(m.resumed.Sub(m.fault.start))
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%d\t%s\t%d\t%d\t\n", m.fault.start.Format("15:04:05.000"), m.refused, m.messages,
			first, secs(m.refusedFor()), m.accepted, again, m.publishedAfterRefusal, m.neverPublished)
	}
	w.Flush()
}

// destroyCosts sums, per group, the messages lost inside group-destroy windows and those
// acked, then dead-lettered on redelivery for a missing payload.
func destroyCosts(ds []destroyFigures) (lost, deadAgain map[string]int) {
	lost, deadAgain = map[string]int{}, map[string]int{}
	for _, d := range ds {
		lost[d.fault.group] += d.lost
		deadAgain[d.fault.group] += d.deadAgain
	}
	return lost, deadAgain
}

// windowLosses counts what group-destroy windows cost: messages lost, and messages
// dead-lettered on redelivery.
func windowLosses(ds []destroyFigures) int {
	n := 0
	for _, d := range ds {
		n += d.lost + d.deadAgain
	}
	return n
}
