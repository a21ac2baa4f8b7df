//go:build soak

package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// plan is the shape of a run: consumers and publishers warm up, then faults follow each
// other with a quiet gap in between, in rounds of every kind in random order, until tail
// before the end of the run, which is left quiet.
type plan struct {
	warmup, tail, gap time.Duration
}

const (
	warmup = 5 * time.Second
	tail   = 10 * time.Second
	minGap = time.Second
)

// newPlan fits at least one round of every fault kind into duration, shortening the gap
// when needed.
func newPlan(duration, gap time.Duration) (plan, error) {
	var holds time.Duration
	for _, k := range faultKinds {
		holds += k.hold
	}
	n := time.Duration(len(faultKinds))
	room := duration - warmup - tail - holds*3/2
	p := plan{warmup: warmup, tail: tail, gap: min(gap, room/n)}
	if p.gap < minGap {
		return p, fmt.Errorf("-soak.duration %s is too short for every fault kind: it needs at least %s",
			duration, warmup+tail+holds*3/2+n*minGap)
	}
	return p, nil
}

// schedule injects faults until the next one would not end before until.
func (r *run) schedule(ctx context.Context, until time.Time, gap time.Duration) []fault {
	var out []fault
	for {
		for _, i := range r.rng.Perm(len(faultKinds)) {
			k := faultKinds[i]
			if time.Now().Add(k.hold * 3 / 2).After(until) {
				return out
			}
			f := k.inject(ctx, r)
			out = append(out, f)
			r.logFault(f)
			if ctx.Err() != nil || !pause(ctx, gap) {
				return out
			}
		}
	}
}

// logFault prints the fault and appends it to faults.txt next to the ledgers.
func (r *run) logFault(f fault) {
	line := fmt.Sprintf("%s fault %-34s %5.1fs", f.start.Format("15:04:05.000"), f.kind, f.end.Sub(f.start).Seconds())
	if f.target != "" {
		line += fmt.Sprintf("  %s (held %d partitions)", f.target, len(f.owned))
	}
	if len(f.hit) > 0 {
		line += fmt.Sprintf("  group %s on partitions %v", f.group, f.hit)
	}
	if f.err != nil {
		line += "  ERROR: " + f.err.Error()
	}
	fmt.Println(line)
	if fl, err := os.OpenFile(filepath.Join(r.fleet.dir, "faults.txt"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		_, _ = fmt.Fprintln(fl, line)
		_ = fl.Close()
	}
}

// checkFaults: every kind was injected, each as planned.
func checkFaults(faults []fault, v *verdict) {
	done := map[string]bool{}
	for _, f := range faults {
		if f.err != nil {
			v.fail("fault injection failed", "%s at %s: %v", f.kind, f.start.Format("15:04:05.000"), f.err)
			continue
		}
		done[f.kind] = true
	}
	for _, k := range faultKinds {
		if !done[k.name] {
			v.fail("fault kinds not exercised", "%s", k.name)
		}
	}
}
