//go:build soak

package soak

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/chaos"
	"github.com/streamq-dev/streamq/internal/keys"
	membership "github.com/streamq-dev/streamq/internal/member"
)

// proc is one incarnation of a child process in a slot ("pub0", "alpha1", ...).
type proc struct {
	slot, role, group, name string
	cmd                     *exec.Cmd
	stdin                   io.WriteCloser // never written: its end of file tells the child TestSoak died
	log                     *os.File
	done                    chan struct{}
}

// fleet owns the child processes, one proxy per slot between them and Redis, and a direct
// client for the orchestrator's reads.
type fleet struct {
	dir    string
	seed   int64
	rate   int
	target string // Redis address
	direct *redis.Client

	mu      sync.Mutex
	procs   map[string]*proc // the current incarnation of each slot
	incs    map[string]int
	proxies map[string]*chaos.Proxy
	exited  []string // problems: children that exited badly
}

func newFleet(dir string, seed int64, rate int, target string, direct *redis.Client) *fleet {
	return &fleet{dir: dir, seed: seed, rate: rate, target: target, direct: direct,
		procs: map[string]*proc{}, incs: map[string]int{}, proxies: map[string]*chaos.Proxy{}}
}

// proxy returns the slot's proxy, starting it on first use.
func (f *fleet) proxy(slot string) (*chaos.Proxy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.proxies[slot]; ok {
		return p, nil
	}
	p, err := chaos.Listen(f.target)
	if err != nil {
		return nil, fmt.Errorf("proxy of %s: %w", slot, err)
	}
	f.proxies[slot] = p
	return p, nil
}

func (f *fleet) allProxies() []*chaos.Proxy {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*chaos.Proxy, 0, len(f.proxies))
	for _, p := range f.proxies {
		out = append(out, p)
	}
	return out
}

// spawn starts a new incarnation of slot: the test binary again, with SOAK_ROLE set.
func (f *fleet) spawn(slot, role, group string) (*proc, error) {
	px, err := f.proxy(slot)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.incs[slot]++
	name := slot + "." + strconv.Itoa(f.incs[slot])
	f.mu.Unlock()
	p := &proc{slot: slot, role: role, group: group, name: name, done: make(chan struct{})}
	if err := p.start(f, px.Addr()); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.procs[slot] = p
	f.mu.Unlock()
	go f.reap(p)
	return p, nil
}

func (p *proc) start(f *fleet, addr string) error {
	var err error
	if p.log, err = os.Create(filepath.Join(f.dir, p.name+".log")); err != nil {
		return fmt.Errorf("log of %s: %w", p.name, err)
	}
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = append(os.Environ(), envRole+"="+p.role, envAddr+"="+addr, envName+"="+p.name,
		envGroup+"="+p.group, envLedger+"="+filepath.Join(f.dir, p.name+".jsonl"),
		envRate+"="+strconv.Itoa(f.rate), envSeed+"="+strconv.FormatInt(f.seed, 10))
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return fmt.Errorf("stdin of %s: %w", p.name, err)
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	return nil
}

// reap waits for p to exit and records an exit that was not asked for.
func (f *fleet) reap(p *proc) {
	err := p.cmd.Wait()
	_ = p.log.Close()
	close(p.done)
	if err != nil && !killedOnPurpose(p) {
		f.mu.Lock()
		f.exited = append(f.exited, fmt.Sprintf("%s exited: %v (see %s.log)", p.name, err, p.name))
		f.mu.Unlock()
	}
}

// killedOnPurpose reports whether p died of the SIGKILL the fault schedule sent.
func killedOnPurpose(p *proc) bool {
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func (f *fleet) current(slot string) *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[slot]
}

func (p *proc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s to %s: %w", sig, p.name, err)
	}
	return nil
}

// wait waits up to timeout for p to exit.
func (p *proc) wait(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return fmt.Errorf("%s did not exit within %s", p.name, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends p gracefully (SIGTERM) and checks it exited cleanly.
func (p *proc) stop(ctx context.Context, timeout time.Duration) error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := p.wait(ctx, timeout); err != nil {
		return err
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("%s exited with %d after SIGTERM (see %s.log)", p.name, code, p.name)
	}
	return nil
}

// kill ends every child at once (the cleanup of a failed run) and closes the proxies.
func (f *fleet) kill() {
	f.mu.Lock()
	procs := make([]*proc, 0, len(f.procs))
	for _, p := range f.procs {
		procs = append(procs, p)
	}
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Kill() // also ends a stopped child
		<-p.done
	}
	for _, px := range f.allProxies() {
		_ = px.Close()
	}
}

// owned reads which partitions member holds in group (lease owner tokens "member#...").
func (f *fleet) owned(ctx context.Context, group, member string) ([]int, error) {
	cmds := make([]*redis.StringCmd, partitions)
	_, err := f.direct.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for p := range cmds {
			cmds[p] = pl.Get(ctx, leaseKey(group, p))
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	var out []int
	for p, c := range cmds {
		if membership.TokenMember(c.Val()) == member {
			out = append(out, p)
		}
	}
	return out, nil
}

func leaseKey(group string, p int) string { return keys.New("", "").Lease(topic, p, group) }

func (f *fleet) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.exited...)
}
