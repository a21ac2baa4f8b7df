//go:build soak

package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// analysisTime is kept free at the end of go test's -timeout for draining and the checks.
const analysisTime = 4 * time.Minute

// TestSoak runs the soak: see the package documentation.
func TestSoak(t *testing.T) {
	p, err := newPlan(*flagDuration, *flagGap)
	if err != nil {
		t.Fatal(err)
	}
	seed := *flagSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	dir := soakDir(t)
	ctx, cancel := runContext(t)
	defer cancel()
	fmt.Printf("soak: seed %d, duration %s, gap %s, %d publishers x %d msg/s, %d consumers per group; ledgers and logs in %s\n",
		seed, *flagDuration, p.gap, *flagPublishers, *flagRate, *flagConsumers, dir)
	srv := redistest.StartWith(t, redistest.AOFAlways)
	direct := srv.Client(t)
	fl := newFleet(dir, seed, *flagRate, srv.Addr(), direct)
	t.Cleanup(fl.kill)
	r := &run{fleet: fl, srv: srv, rng: rand.New(rand.NewPCG(uint64(seed), 1))}

	begin, faults, drain := exercise(ctx, t, r, p)
	d, err := loadDataset(ctx, dir, direct)
	if err != nil {
		t.Fatal(err)
	}
	v := newVerdict()
	if drain.left != "" {
		v.fail("stuck partitions", "not consumed %s after the publishers stopped: %s", drainTimeout, drain.left)
	}
	for _, problem := range fl.problems() {
		v.fail("processes that died", "%s", problem)
	}
	checkFaults(faults, v)
	figures := analyse(d, v, faults, begin)
	figures.lagClaims = drain.lagClaims
	report(t, dir, seed, figures, v)
}

// exercise runs the processes and the fault schedule, stops the publishers, waits until
// everything is consumed and stops the consumers. It returns when publishing began, the
// faults and how the drain went.
func exercise(ctx context.Context, t *testing.T, r *run, p plan) (time.Time, []fault, drained) {
	fl := r.fleet
	for _, g := range groups {
		for i := 0; i < *flagConsumers; i++ {
			must(t, spawnErr(fl.spawn(consumerSlot(g, i), "consumer", g)))
		}
	}
	must(t, waitAllLeased(ctx, fl.direct))
	for i := 0; i < *flagPublishers; i++ {
		must(t, spawnErr(fl.spawn(fmt.Sprintf("pub%d", i), "publisher", "")))
	}
	begin := time.Now()
	pause(ctx, p.warmup)
	faults := r.schedule(ctx, begin.Add(*flagDuration-p.tail), p.gap)
	pause(ctx, time.Until(begin.Add(*flagDuration)))
	must(t, stopAll(ctx, fl, "pub"))
	fmt.Printf("%s publishers stopped; draining\n", time.Now().Format("15:04:05.000"))
	left := waitDrained(ctx, fl.direct)
	must(t, stopAll(ctx, fl, ""))
	return begin, faults, left
}

// stopAll stops, with SIGTERM and at once, the current process of every slot starting with
// prefix ("": all), and checks each exited cleanly.
func stopAll(ctx context.Context, fl *fleet, prefix string) error {
	fl.mu.Lock()
	var procs []*proc
	for slot, p := range fl.procs {
		if len(slot) >= len(prefix) && slot[:len(prefix)] == prefix {
			procs = append(procs, p)
		}
	}
	fl.mu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.done:
			default:
				errs[i] = p.stop(ctx, exitTimeout)
			}
		}()
	}
	wg.Wait()
	var err error
	for _, e := range errs {
		err = joinErr(err, e)
	}
	return err
}

// waitAllLeased waits until every partition of every group has an owner.
func waitAllLeased(ctx context.Context, client *redis.Client) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("not every partition leased within 30s")
		case <-ctx.Done():
			return ctx.Err()
		}
		n := 0
		for _, g := range groups {
			for p := 0; p < partitions; p++ {
				if client.Exists(ctx, leaseKey(g, p)).Val() == 1 {
					n++
				}
			}
		}
		if n == len(groups)*partitions {
			return nil
		}
	}
}

// soakDir is where the ledgers and logs go: -soak.dir, or a new temporary directory that
// is removed after a successful run unless -soak.keep.
func soakDir(t *testing.T) string {
	if *flagDir != "" {
		must(t, os.MkdirAll(*flagDir, 0o755))
		return *flagDir
	}
	dir, err := os.MkdirTemp("", "streamq-soak-")
	must(t, err)
	t.Cleanup(func() {
		if t.Failed() || *flagKeep {
			fmt.Printf("soak: ledgers and logs kept in %s\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return filepath.Clean(dir)
}

// runContext ends analysisTime before go test's -timeout, so a run that overruns still
// stops its processes and reports.
func runContext(t *testing.T) (context.Context, context.CancelFunc) {
	if deadline, ok := t.Deadline(); ok {
		if need := *flagDuration + analysisTime; time.Until(deadline) < need {
			t.Fatalf("go test -timeout leaves %s; the soak needs -soak.duration + %s = %s", time.Until(deadline).Round(time.Second), analysisTime, need)
		}
		return context.WithDeadline(context.Background(), deadline.Add(-analysisTime))
	}
	return context.WithCancel(context.Background())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func spawnErr(_ *proc, err error) error { return err }
