package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
)

// env is what every scenario shares: the configuration, the Redis address and the logger.
type env struct {
	cfg       *config
	opts      *redis.Options
	logger    watermill.LoggerAdapter
	profile   []string // pprof files written
	redisPIDs []int    // the redis-servers this program started (every cluster node), none with --redis-url
	cluster   []string // with --cluster: the addresses of the masters; clients are ClusterClients
	ceiling   ceilingBacklogs
}

// client returns a new client with the benchmark's options: every publisher, subscriber and
// prefill gets its own (watermill-redisstream closes the client it is given). With --cluster
// it is a *redis.ClusterClient over the cluster's masters.
func (e *env) client() redis.UniversalClient {
	if len(e.cluster) > 0 {
		o := &redis.ClusterOptions{Addrs: e.cluster}
		if e.cfg.poolSize > 0 {
			o.PoolSize = e.cfg.poolSize
		}
		return redis.NewClusterClient(o)
	}
	o := *e.opts
	if e.cfg.poolSize > 0 {
		o.PoolSize = e.cfg.poolSize
	}
	return redis.NewClient(&o)
}

// window is one scenario's measured interval: a CPU profile of it (with --cpuprofile) and
// the CPU time used meanwhile by this program, the redis-server it started and everything
// else on the machine (noise from other processes shows there).
type window struct {
	e     *env
	f     *os.File
	start cpuSnap
	t0    time.Time
	extra map[string]float64
	notes []string
}

// startWindow starts the measured interval of one scenario; a CPU profile goes to
// OUT/cpu-WORKLOAD-TRANSPORT-SIZE.pprof when --cpuprofile is set.
func (e *env) startWindow(workload string, tr transport, size int) *window {
	w := &window{e: e}
	if e.cfg.cpuProfile {
		path := filepath.Join(e.cfg.out, fmt.Sprintf("cpu-%s-%s-%d.pprof", workload, tr.Name, size))
		f, err := os.Create(path)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err == nil {
				w.f = f
				e.profile = append(e.profile, path)
			} else {
				_ = f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "cpuprofile: %v\n", err)
		}
	}
	w.start, w.t0 = readCPU(e.redisPIDs), time.Now()
	return w
}

// stop ends the interval (idempotent) and computes the CPU shares, in percent of one core.
func (w *window) stop() {
	if w.extra != nil {
		return
	}
	end := readCPU(w.e.redisPIDs)
	if w.f != nil {
		pprof.StopCPUProfile()
		_ = w.f.Close()
		w.f = nil
	}
	w.extra = map[string]float64{}
	if end.total <= w.start.total {
		return
	}
	cores := float64(runtime.NumCPU())
	pct := func(ticks uint64) float64 {
		return 100 * cores * float64(ticks) / float64(end.total-w.start.total)
	}
	self := sub(end.self, w.start.self)
	red := sub(end.redis, w.start.redis)
	busy := sub(end.busy, w.start.busy)
	other := sub(busy, self+red)
	w.extra["cpu_bench_pct"] = pct(self)
	w.extra["cpu_bench_s"] = float64(self) / clockTicks
	if len(w.e.redisPIDs) > 0 {
		w.extra["cpu_redis_pct"] = pct(red)
		w.extra["cpu_redis_s"] = float64(red) / clockTicks
	}
	w.extra["cpu_other_pct"] = pct(other)
}

// attach adds the CPU figures and notes to r.
func (w *window) attach(r *Result) {
	w.stop()
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	for k, v := range w.extra {
		r.Extra[k] = v
	}
	r.Notes = append(r.Notes, w.notes...)
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// clockTicks is USER_HZ, the unit of /proc/stat and /proc/PID/stat (100 on Linux).
const clockTicks = 100

// cpuSnap holds clock ticks: the machine's busy and total time (/proc/stat), this process's
// and the redis-server's (every cluster node's, summed) user+system time.
type cpuSnap struct{ busy, total, self, redis uint64 }

func readCPU(redisPIDs []int) cpuSnap {
	var s cpuSnap
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) >= 9 && f[0] == "cpu" {
			var v [8]uint64
			for i := range v {
				v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
			}
			// user nice system idle iowait irq softirq steal
			s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
			s.total = s.busy + v[3] + v[4]
		}
	}
	s.self = procTicks("self")
	for _, pid := range redisPIDs {
		s.redis += procTicks(strconv.Itoa(pid))
	}
	return s
}

// procTicks is utime+stime of /proc/PID/stat.
func procTicks(pid string) uint64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// fields after the command: state(0) ... utime(11) stime(12)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return u + st
}

// memSampler records the maxima of HeapInuse and VmRSS, sampled every interval.
type memSampler struct {
	maxHeap, maxRSS uint64
	n               int
	heaps           []uint64 // every HeapInuse sample, in order
	quit, done      chan struct{}
}

func startMemSampler(every time.Duration) *memSampler {
	s := &memSampler{quit: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.sample()
			case <-s.quit:
				s.sample()
				return
			}
		}
	}()
	return s
}

func (s *memSampler) sample() {
	h := heapInuse()
	s.heaps = append(s.heaps, h)
	s.maxHeap = max(s.maxHeap, h)
	s.maxRSS = max(s.maxRSS, rss())
	s.n++
}

// halves returns the maximum HeapInuse of the first and of the second half of the samples
// (after stop): a heap that grows with the consumed backlog shows as second > first.
func (s *memSampler) halves() (first, second uint64) {
	mid := len(s.heaps) / 2
	for i, h := range s.heaps {
		if i < mid {
			first = max(first, h)
		} else {
			second = max(second, h)
		}
	}
	return first, second
}

func (s *memSampler) stop() (maxHeap, maxRSS uint64, samples int) {
	close(s.quit)
	<-s.done
	return s.maxHeap, s.maxRSS, s.n
}

func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// rss is VmRSS of /proc/self/status in bytes (0 where unavailable).
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				kb, _ := strconv.ParseUint(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// errLogger prints Error logs (at most 50, then counts them) and drops everything else.
type errLogger struct {
	fields watermill.LogFields
	shared *errCount
}

type errCount struct {
	mu       sync.Mutex
	printed  int
	dropped  atomic.Int64
	scenario string
	lines    []string
}

func newErrLogger() *errLogger { return &errLogger{shared: &errCount{}} }

func (l *errLogger) setScenario(s string) {
	l.shared.mu.Lock()
	l.shared.scenario = s
	l.shared.mu.Unlock()
}

func (l *errLogger) Error(msg string, err error, fields watermill.LogFields) {
	if errors.Is(err, context.Canceled) {
		return // shutdown noise (watermill-redisstream's reader outlives its Close)
	}
	c := l.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.printed >= 50 {
		c.dropped.Add(1)
		return
	}
	c.printed++
	line := fmt.Sprintf("[%s] error: %s: %v", c.scenario, msg, err)
	if f := l.fields.Add(fields); len(f) > 0 {
		line += fmt.Sprintf(" %v", f)
	}
	c.lines = append(c.lines, line)
}

// take returns the error lines logged since the last call (printed after the scenario's
// result line, so they do not cut it).
func (l *errLogger) take() []string {
	l.shared.mu.Lock()
	defer l.shared.mu.Unlock()
	lines := l.shared.lines
	l.shared.lines = nil
	return lines
}

func (l *errLogger) Info(string, watermill.LogFields)  {}
func (l *errLogger) Debug(string, watermill.LogFields) {}
func (l *errLogger) Trace(string, watermill.LogFields) {}
func (l *errLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return &errLogger{fields: l.fields.Add(fields), shared: l.shared}
}
