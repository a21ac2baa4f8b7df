// Command bench runs the same workloads on streamq (1 and 8 partitions),
// watermill-redisstream v1.4.5 with its defaults, and go-redis alone (the ceiling), against
// one Redis, and prints a table with ratios; it writes results/results.json and
// results/chart.svg.
//
//	cd bench && go run .            # full run (a few minutes), own redis-server
//	cd bench && go run . --quick    # about a minute
//	cd bench && go run . --redis-url redis://127.0.0.1:6380/0 --allow-flush
//	cd bench && go run . --cluster  # own 3-master Redis Cluster, streamq 8 and 24 partitions
//
// Without --redis-url it starts redis-server on a free loopback port with --save ”
// --appendonly no and stops it at exit (also on Ctrl-C). Between scenarios the database is
// flushed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
)

type config struct {
	redisURL, redisServer string
	allowFlush            bool
	cluster               bool
	quick                 bool
	replot                string
	out                   string
	cpuProfile            bool
	poolSize              int

	sizes      []int
	transports []string
	workloads  []string

	pubN, pubNRedisstream, pubWorkers, pipeline int
	pubBudget                                   time.Duration

	subBacklog, subN, subNRedisstream, batchCount int
	flushers                                      int
	subBudget                                     time.Duration

	latRate, latSize, latPublishers        int
	latDuration, latWarmup, latDrain       time.Duration
	memBacklog, memSize                    int
	memBudget                              time.Duration
	sizesFlag, transportsFlag, workloadsFl string
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.redisURL, "redis-url", "", "use this Redis instead of starting redis-server (its database is flushed between scenarios: needs --allow-flush unless empty)")
	fs.BoolVar(&c.allowFlush, "allow-flush", false, "with --redis-url: flush the database even though it holds keys")
	fs.StringVar(&c.redisServer, "redis-server", "redis-server", "redis-server binary started when --redis-url is not given")
	fs.BoolVar(&c.cluster, "cluster", false, "start a 3-master Redis Cluster (redis-server and redis-cli from PATH, free loopback ports) and run every transport through a ClusterClient; streamq runs 8 and 24 partitions unless --transports says otherwise")
	fs.BoolVar(&c.quick, "quick", false, "smoke run of about a minute: small counts and budgets (explicit flags still win)")
	fs.StringVar(&c.replot, "replot", "", "measure nothing: read this results.json, print its table and write OUT/chart.svg")
	fs.StringVar(&c.out, "out", "results", "directory of results.json, chart.svg and CPU profiles")
	fs.BoolVar(&c.cpuProfile, "cpuprofile", false, "write a CPU profile of each scenario to OUT/cpu-WORKLOAD-TRANSPORT-SIZE.pprof")
	fs.IntVar(&c.poolSize, "pool-size", 0, "go-redis PoolSize of every client (0: go-redis default, 10 x GOMAXPROCS)")
	fs.StringVar(&c.sizesFlag, "sizes", "16,256,4096", "message sizes (bytes) of the publish and subscribe throughput workloads")
	fs.StringVar(&c.transportsFlag, "transports", "streamq-1p,streamq-1p-plain,streamq-8p,streamq-8p-plain,redisstream,go-redis,router-ceiling",
		"transports to run (-plain: idempotent publish off, plain XADD; -uuid: idempotent by UUID; both publish workloads only; router-ceiling: messages from memory through the same Router, subscribe only; -direct: streamq read from Subscribe's channel and acked in place, no Router, subscribe only)")
	fs.StringVar(&c.workloadsFl, "workloads", "publish,publish-batched,subscribe,latency,memory,slow-handler",
		"workloads to run (publish-batched: 100 messages per Publish call, see --pipeline; slow-handler: a 5 ms handler over 64 keys in each ordering mode, streamq only)")

	fs.IntVar(&c.pubN, "publish-n", 200_000, "publish: messages per run (streamq, go-redis)")
	fs.IntVar(&c.pubNRedisstream, "publish-n-redisstream", 100_000, "publish: messages per run for watermill-redisstream")
	fs.DurationVar(&c.pubBudget, "publish-budget", 10*time.Second, "publish: longest run; the rate is then over what was published")
	fs.IntVar(&c.pubWorkers, "publishers", 64, "publish: concurrent publishing goroutines")
	fs.IntVar(&c.pipeline, "pipeline", 100, "publish: XADDs per round trip of the go-redis ceiling")

	fs.IntVar(&c.subBacklog, "subscribe-backlog", 200_000, "subscribe: prefilled backlog")
	fs.IntVar(&c.subN, "subscribe-n", 200_000, "subscribe: messages to handle (streamq, go-redis)")
	fs.IntVar(&c.subNRedisstream, "subscribe-n-redisstream", 50_000, "subscribe: messages to handle for watermill-redisstream")
	fs.DurationVar(&c.subBudget, "subscribe-budget", 20*time.Second, "subscribe: longest run; the rate is then over what was handled")
	fs.IntVar(&c.flushers, "flushers", 0, "PipelineConfig.Flushers of streamq's Publisher (0: its default)")
	fs.IntVar(&c.batchCount, "batch-count", 100, "XREADGROUP COUNT of streamq (SubscriberConfig.Read.BatchCount) and of the go-redis ceiling")

	fs.IntVar(&c.latRate, "latency-rate", 10_000, "latency: publish rate (msg/s)")
	fs.DurationVar(&c.latDuration, "latency-duration", 10*time.Second, "latency: measured window")
	fs.DurationVar(&c.latWarmup, "latency-warmup", time.Second, "latency: unmeasured publishing at the rate before the window")
	fs.DurationVar(&c.latDrain, "latency-drain", 10*time.Second, "latency: longest wait for the last messages after publishing stops")
	fs.IntVar(&c.latSize, "latency-size", 256, "latency: message size (bytes, at least 16)")
	fs.IntVar(&c.latPublishers, "latency-publishers", 8, "latency: publishing goroutines fed by the pacer")

	fs.IntVar(&c.memBacklog, "memory-backlog", 1_000_000, "memory: prefilled backlog")
	fs.IntVar(&c.memSize, "memory-size", 256, "memory: message size (bytes)")
	fs.DurationVar(&c.memBudget, "memory-budget", 30*time.Second, "memory: longest consumption (the maxima are over that window)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := map[string]string{
			"publish-n": "20000", "publish-n-redisstream": "10000", "publish-budget": "2s",
			"subscribe-backlog": "20000", "subscribe-n": "20000", "subscribe-n-redisstream": "5000", "subscribe-budget": "3s",
			"latency-duration": "2s", "latency-warmup": "500ms", "latency-drain": "3s",
			"memory-backlog": "100000", "memory-budget": "5s",
		}
		for name, v := range quick {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					return nil, err
				}
			}
		}
	}
	if c.cluster {
		if c.redisURL != "" {
			return nil, errors.New("--cluster starts its own cluster: it does not combine with --redis-url")
		}
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "transports" })
		if !set {
			c.transportsFlag = "streamq-8p,streamq-24p,redisstream,go-redis"
		}
	}
	var err error
	if c.sizes, err = parseInts(c.sizesFlag); err != nil {
		return nil, fmt.Errorf("--sizes: %w", err)
	}
	c.transports = splitList(c.transportsFlag)
	for _, t := range c.transports {
		if _, ok := transportByName(t); !ok {
			return nil, fmt.Errorf("--transports: unknown %q", t)
		}
	}
	c.workloads = splitList(c.workloadsFl)
	for _, w := range c.workloads {
		switch w {
		case "publish", "publish-batched", "subscribe", "latency", "memory", "slow-handler":
		default:
			return nil, fmt.Errorf("--workloads: unknown %q", w)
		}
	}
	if c.latSize < 16 {
		return nil, errors.New("--latency-size must be at least 16")
	}
	if c.latRate <= 0 || c.pubWorkers <= 0 || c.pipeline <= 0 || c.latPublishers <= 0 || c.batchCount <= 0 {
		return nil, errors.New("rates, publishers, pipeline and batch count must be positive")
	}
	return c, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func transportByName(name string) (transport, bool) {
	for _, t := range allTransports {
		if t.Name == name {
			return t, true
		}
	}
	return transport{}, false
}

func (c *config) has(workload string) bool {
	for _, w := range c.workloads {
		if w == workload {
			return true
		}
	}
	return false
}

// consumers are the selected transports that consume differently from each other: the
// plain-XADD rows differ from their idempotent twins only when publishing.
func (c *config) consumers() []transport {
	var out []transport
	for _, t := range c.selected() {
		if !t.plainXAdd && !t.byUUID {
			out = append(out, t)
		}
	}
	return out
}

// publishers are the selected transports that publish: all but the zero-cost one and the
// direct consumers (they publish as their Router twins do).
func (c *config) publishers() []transport {
	var out []transport
	for _, t := range c.selected() {
		if t.kind != kindRouter && !t.direct {
			out = append(out, t)
		}
	}
	return out
}

func (c *config) selected(kinds ...string) []transport {
	var out []transport
	for _, t := range allTransports {
		for _, name := range c.transports {
			if name != t.Name {
				continue
			}
			if len(kinds) == 0 {
				out = append(out, t)
				continue
			}
			for _, k := range kinds {
				if k == t.Name {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	if cfg.replot != "" {
		return replot(cfg)
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	finished := make(chan struct{})
	defer close(finished) // runs before stopSignals
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		select {
		case <-finished:
			return
		default:
		}
		stopSignals() // a second Ctrl-C kills at once (redis-server dies with us: Pdeathsig)
		fmt.Fprintln(os.Stderr, "\ninterrupted: stopping the current scenario, writing partial results")
	}()
	began := time.Now()

	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	var opts *redis.Options
	var srv *redisServer
	var cl *redisCluster
	if cfg.cluster {
		fmt.Fprintln(os.Stderr, "starting a 3-master Redis Cluster ...")
		cl, err = startCluster(ctx, cfg.redisServer, 3)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		defer cl.Stop()
		opts = &redis.Options{Addr: strings.Join(cl.addrs(), ",")}
	} else if cfg.redisURL != "" {
		if opts, err = redis.ParseURL(cfg.redisURL); err != nil {
			fmt.Fprintln(os.Stderr, "bench: --redis-url:", err)
			return 2
		}
	} else {
		srv, err = startRedis(ctx, cfg.redisServer)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		defer srv.Stop()
		opts = &redis.Options{Addr: srv.addr}
	}
	var replicas []*redisServer
	if n := benchReplicas(); n > 0 && srv != nil {
		fmt.Fprintf(os.Stderr, "starting %d replica(s) of the redis-server ...\n", n)
		replicas, err = startReplicas(ctx, cfg.redisServer, srv, n)
		for _, r := range replicas {
			defer r.Stop()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	}
	var admin redis.UniversalClient
	if cl != nil {
		admin = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.addrs()})
	} else {
		admin = redis.NewClient(opts)
	}
	defer admin.Close()
	flush := func() error {
		if cc, ok := admin.(*redis.ClusterClient); ok {
			return cc.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
				return c.FlushAll(ctx).Err()
			})
		}
		if srv != nil {
			return admin.FlushAll(context.Background()).Err()
		}
		return admin.FlushDB(context.Background()).Err()
	}
	if srv == nil && cl == nil {
		n, err := admin.DBSize(ctx).Result()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: --redis-url:", err)
			return 1
		}
		if n > 0 && !cfg.allowFlush {
			fmt.Fprintf(os.Stderr, "bench: %s holds %d keys and would be flushed between scenarios; pass --allow-flush or use an empty database\n", cfg.redisURL, n)
			return 2
		}
	}

	logger := newErrLogger()
	redis.SetLogger(goRedisLogger{logger})
	e := &env{cfg: cfg, opts: opts, logger: logger}
	if srv != nil {
		e.redisPIDs = []int{srv.cmd.Process.Pid}
	}
	for _, r := range replicas {
		e.redisPIDs = append(e.redisPIDs, r.cmd.Process.Pid)
	}
	if cl != nil {
		e.redisPIDs = cl.pids()
		e.cluster = cl.addrs()
	}
	rep := &Report{
		Date:         began.UTC().Format(time.RFC3339),
		GoVersion:    runtime.Version(),
		RedisVersion: redisVersion(ctx, admin),
		RedisAddr:    opts.Addr,
		CPUs:         runtime.NumCPU(),
		GOMAXPROCS:   runtime.GOMAXPROCS(0),
		OSArch:       runtime.GOOS + "/" + runtime.GOARCH,
		Command:      strings.TrimSpace("go run . " + strings.Join(args, " ")),
		Config:       cfg.describe(),
		LoadAvgStart: loadAvg(),
	}
	if srv != nil {
		rep.RedisAddr += " (redis-server started by the benchmark)"
	}
	if cl != nil {
		rep.RedisAddr = fmt.Sprintf("Redis Cluster of %d masters, no replicas, at %s (started by the benchmark; every client a ClusterClient; CPU redis = the nodes summed)", len(cl.nodes), opts.Addr)
	}
	fmt.Fprintln(os.Stderr, rep.header())
	fmt.Fprintf(os.Stderr, "redis at %s\n", rep.RedisAddr)

	type scenario struct {
		name string
		run  func() []Result
	}
	var plan []scenario
	add := func(workload string, size int, t transport, f func() []Result) {
		plan = append(plan, scenario{name: fmt.Sprintf("%s %dB %s", workload, size, t.Name), run: f})
	}
	if cfg.has("publish") {
		for _, size := range cfg.sizes {
			for _, t := range cfg.publishers() {
				add("publish", size, t, func() []Result { return []Result{e.publishThroughput(ctx, t, size, wPublish)} })
			}
		}
	}
	if cfg.has("publish-batched") {
		for _, size := range cfg.sizes {
			for _, t := range cfg.publishers() {
				add("publish-batched", size, t, func() []Result { return []Result{e.publishThroughput(ctx, t, size, wPublishN)} })
			}
		}
	}
	if cfg.has("subscribe") {
		for _, size := range cfg.sizes {
			for _, t := range cfg.consumers() {
				add("subscribe", size, t, func() []Result { return []Result{e.subscribeThroughput(ctx, t, size)} })
			}
		}
	}
	if cfg.has("latency") {
		for _, t := range cfg.consumers() {
			if t.kind == kindRouter {
				continue // no stream behind it: nothing to measure end to end
			}
			add("latency", cfg.latSize, t, func() []Result { return e.latency(ctx, t, cfg.latSize) })
		}
	}
	if cfg.has("slow-handler") {
		for _, p := range []int{1, 8} {
			for _, m := range slowModes {
				t := transport{Name: fmt.Sprintf("streamq-%dp %s", p, m.name)}
				add("slow-handler", slowPayload, t, func() []Result { return []Result{e.slowHandler(ctx, p, m)} })
			}
		}
	}
	if cfg.has("memory") {
		for _, t := range cfg.selected("streamq-8p", refRedisstream) {
			add("memory", cfg.memSize, t, func() []Result { return e.memory(ctx, t, cfg.memSize) })
		}
	}

	for i, sc := range plan {
		if ctx.Err() != nil {
			break
		}
		if err := flush(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: flush:", err)
			return 1
		}
		logger.setScenario(sc.name)
		settle()
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "[%2d/%d] %-32s ", i+1, len(plan), sc.name)
		results := sc.run()
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "interrupted")
			for _, line := range logger.take() {
				fmt.Fprintln(os.Stderr, "        "+line)
			}
			break
		}
		var parts []string
		for _, r := range results {
			v := "n/a"
			if r.Value != nil {
				v = fmtValue(*r.Value, workloadInfo[r.Workload].unit) + " " + workloadInfo[r.Workload].unit
			}
			if len(results) > 1 {
				v = strings.TrimPrefix(r.Workload, "latency_") + "=" + v
			}
			if len(r.Notes) > 0 {
				v += " *"
			}
			parts = append(parts, v)
		}
		if len(results) > 0 {
			parts = append(parts, "cpu% bench/redis/other "+cpuShares(results[0]))
		}
		fmt.Fprintf(os.Stderr, "%s  (%.1fs)\n", strings.Join(parts, ", "), time.Since(t0).Seconds())
		for _, line := range logger.take() {
			fmt.Fprintln(os.Stderr, "        "+line)
		}
		rep.Results = append(rep.Results, results...)
	}
	_ = flush()
	if d := logger.shared.dropped.Load(); d > 0 {
		fmt.Fprintf(os.Stderr, "(%d further error logs dropped)\n", d)
	}

	rep.Interrupted = ctx.Err() != nil
	rep.Seconds = time.Since(began).Seconds()
	rep.LoadAvgEnd = loadAvg()
	rep.Profiles = e.profile
	rep.finish()
	fmt.Println()
	rep.writeTable(os.Stdout)
	if err := rep.writeFiles(cfg.out); err != nil {
		fmt.Fprintln(os.Stderr, "bench: write results:", err)
		return 1
	}
	fmt.Printf("wrote %s/results.json and %s/chart.svg\n", cfg.out, cfg.out)
	if rep.Interrupted {
		return 130
	}
	return 0
}

func (c *config) describe() map[string]string {
	return map[string]string{
		"sizes":                   c.sizesFlag,
		"transports":              c.transportsFlag,
		"workloads":               c.workloadsFl,
		"quick":                   strconv.FormatBool(c.quick),
		"cluster":                 strconv.FormatBool(c.cluster),
		"pool_size":               strconv.Itoa(c.poolSize),
		"publish_n":               strconv.Itoa(c.pubN),
		"publish_n_redisstream":   strconv.Itoa(c.pubNRedisstream),
		"publish_budget":          c.pubBudget.String(),
		"publishers":              strconv.Itoa(c.pubWorkers),
		"pipeline":                strconv.Itoa(c.pipeline),
		"subscribe_backlog":       strconv.Itoa(c.subBacklog),
		"subscribe_n":             strconv.Itoa(c.subN),
		"subscribe_n_redisstream": strconv.Itoa(c.subNRedisstream),
		"subscribe_budget":        c.subBudget.String(),
		"batch_count":             strconv.Itoa(c.batchCount),
		"flushers":                strconv.Itoa(c.flushers),
		"latency_rate":            strconv.Itoa(c.latRate),
		"latency_duration":        c.latDuration.String(),
		"latency_warmup":          c.latWarmup.String(),
		"latency_drain":           c.latDrain.String(),
		"latency_size":            strconv.Itoa(c.latSize),
		"latency_publishers":      strconv.Itoa(c.latPublishers),
		"memory_backlog":          strconv.Itoa(c.memBacklog),
		"memory_size":             strconv.Itoa(c.memSize),
		"memory_budget":           c.memBudget.String(),
		"min_replicas":            strconv.Itoa(benchMinReplicas()),
		"replicas":                strconv.Itoa(benchReplicas()),
		"streamq_config":          "Publisher{DefaultPartitionCount: P, MaxLen: -1 (BENCH_MAXLEN), MinReplicas: 0 (BENCH_MIN_REPLICAS)}; Subscriber{ConsumerGroup: bench, BatchCount: batch_count, DefaultPartitionCount: P, MaxInFlightPerPartition: 1 (default)}",
		"redisstream_config":      "NewPublisher{Client} / NewSubscriber{Client, ConsumerGroup: bench}, everything else default",
		"goredis_config":          "publish: pipeline XADDs per round trip; consume: XREADGROUP COUNT batch_count + one XACK per batch, no Router; with --cluster: 24 streams {topic:N} (XADDs round robin over them, one XREADGROUP loop per stream)",
		"watermill":               "v1.5.1",
		"watermill_redisstream":   "v1.4.5",
		"logger":                  fmt.Sprintf("%T (errors only)", watermill.LoggerAdapter(&errLogger{})),
	}
}

// loadAvg is the first three fields of /proc/loadavg ("" where unavailable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// goRedisLogger sends go-redis's internal log lines to the error logger, with the scenario.
type goRedisLogger struct{ l *errLogger }

func (g goRedisLogger) Printf(_ context.Context, format string, v ...any) {
	g.l.Error("go-redis", fmt.Errorf(format, v...), nil)
}

// replot prints the table of a results.json and writes its chart to OUT/chart.svg.
func replot(cfg *config) int {
	b, err := os.ReadFile(cfg.replot)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", cfg.replot+":", err)
		return 1
	}
	rep.finish()
	rep.writeTable(os.Stdout)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	path := filepath.Join(cfg.out, "chart.svg")
	if err := os.WriteFile(path, []byte(rep.chart()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Println("wrote", path)
	return 0
}
