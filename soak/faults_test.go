//go:build soak

package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// Fault kinds.
const (
	kindKill    = "kill -9 consumer"
	kindStop    = "SIGSTOP consumer > lease TTL"
	kindTerm    = "SIGTERM consumer (Close mid-work)"
	kindRestart = "redis-server restart"
	kindCrash   = "redis-server kill -9"
	kindCutOne  = "network cut, one consumer"
	kindCutAll  = "network cut, everyone"
	kindReset   = "connection reset, everyone"
	kindLatency = "latency +100 ms each way"
	kindDestroy = "XGROUP DESTROY, one group"
	kindMemory  = "memory: maxmemory just above used"
)

// Fault timings.
const (
	cutAllFor    = 3 * time.Second
	crashDown    = time.Second
	latencyFor   = 8 * time.Second
	latency      = 100 * time.Millisecond
	respawnAfter = time.Second // a killed consumer comes back after this
	exitTimeout  = 3*closeTimeout + 10*time.Second
)

// faultKind is one kind of fault: inject runs it once and returns what happened.
type faultKind struct {
	name   string
	hold   time.Duration // about how long inject takes
	inject func(ctx context.Context, r *run) fault
}

var faultKinds = []faultKind{
	{kindKill, respawnAfter, injectKill},
	{kindStop, leaseFault, injectStop},
	{kindTerm, closeTimeout, injectTerm},
	{kindRestart, time.Second, injectRestart},
	{kindCrash, crashDown + time.Second, injectCrash},
	{kindCutOne, leaseFault, injectCutOne},
	{kindCutAll, cutAllFor, injectCutAll},
	{kindReset, 0, injectReset},
	{kindLatency, latencyFor, injectLatency},
	{kindDestroy, time.Second, injectDestroy},
	{kindMemory, memoryFor, injectMemory},
}

// fault is one injected fault: its window, for a consumer fault the member it hit and the
// partitions that member held when it started, and for a group destroy the group, the
// partitions hit and the group's commit frontier on each when it was destroyed.
type fault struct {
	kind       string
	target     string
	group      string
	owned      []int
	hit        []int
	frontiers  []string
	start, end time.Time
	err        error // the fault could not be injected as planned
}

// run is the state the faults act on.
type run struct {
	fleet *fleet
	srv   *redistest.Server
	rng   *rand.Rand
}

// victim picks a consumer that holds at least one partition (any consumer when none does)
// and the partitions it holds.
func (r *run) victim(ctx context.Context) (*proc, []int) {
	slots := r.consumerSlots()
	r.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	for _, s := range slots {
		p := r.fleet.current(s)
		if owned, err := r.fleet.owned(ctx, p.group, p.name); err == nil && len(owned) > 0 {
			return p, owned
		}
	}
	return r.fleet.current(slots[0]), nil
}

func (r *run) consumerSlots() []string {
	var out []string
	for _, g := range groups {
		for i := 0; i < *flagConsumers; i++ {
			out = append(out, consumerSlot(g, i))
		}
	}
	return out
}

func consumerSlot(group string, i int) string { return fmt.Sprintf("%s%d", group, i) }

func consumerFault(kind string, p *proc, owned []int) fault {
	return fault{kind: kind, target: p.name, group: p.group, owned: owned, start: time.Now()}
}

func injectKill(ctx context.Context, r *run) fault {
	p, owned := r.victim(ctx)
	f := consumerFault(kindKill, p, owned)
	f.err = p.signal(syscall.SIGKILL)
	if f.err == nil {
		f.err = p.wait(ctx, exitTimeout)
	}
	f.end = time.Now()
	if pause(ctx, respawnAfter) {
		_, err := r.fleet.spawn(p.slot, p.role, p.group)
		f.err = joinErr(f.err, err)
	}
	return f
}

func injectStop(ctx context.Context, r *run) fault {
	p, owned := r.victim(ctx)
	f := consumerFault(kindStop, p, owned)
	f.err = p.signal(syscall.SIGSTOP)
	pause(ctx, leaseFault)
	f.err = joinErr(f.err, p.signal(syscall.SIGCONT))
	f.end = time.Now()
	return f
}

func injectTerm(ctx context.Context, r *run) fault {
	p, owned := r.victim(ctx)
	f := consumerFault(kindTerm, p, owned)
	f.err = p.stop(ctx, exitTimeout)
	f.end = time.Now()
	_, err := r.fleet.spawn(p.slot, p.role, p.group)
	f.err = joinErr(f.err, err)
	return f
}

func injectRestart(_ context.Context, r *run) fault {
	f := fault{kind: kindRestart, start: time.Now()}
	f.err = r.srv.Restart()
	f.end = time.Now()
	return f
}

func injectCrash(ctx context.Context, r *run) fault {
	f := fault{kind: kindCrash, start: time.Now()}
	f.err = r.srv.Kill()
	pause(ctx, crashDown)
	f.err = joinErr(f.err, r.srv.Restart())
	f.end = time.Now()
	return f
}

func injectCutOne(ctx context.Context, r *run) fault {
	p, owned := r.victim(ctx)
	f := consumerFault(kindCutOne, p, owned)
	px, err := r.fleet.proxy(p.slot)
	if err != nil {
		f.err = err
		return f
	}
	px.Cut()
	pause(ctx, leaseFault)
	px.Restore()
	f.end = time.Now()
	return f
}

func injectCutAll(ctx context.Context, r *run) fault {
	f := fault{kind: kindCutAll, start: time.Now()}
	proxies := r.fleet.allProxies()
	for _, px := range proxies {
		px.Cut()
	}
	pause(ctx, cutAllFor)
	for _, px := range proxies {
		px.Restore()
	}
	f.end = time.Now()
	return f
}

func injectReset(_ context.Context, r *run) fault {
	f := fault{kind: kindReset, start: time.Now()}
	for _, px := range r.fleet.allProxies() {
		px.Reset()
	}
	f.end = time.Now()
	return f
}

func injectLatency(ctx context.Context, r *run) fault {
	f := fault{kind: kindLatency, start: time.Now()}
	proxies := r.fleet.allProxies()
	for _, px := range proxies {
		px.SetLatency(latency)
	}
	pause(ctx, latencyFor)
	for _, px := range proxies {
		px.SetLatency(0)
	}
	f.end = time.Now()
	return f
}

func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return fmt.Errorf("%w; %w", a, b)
}
