package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// Workloads (the rows of the table, in this order).
const (
	wPublish    = "publish"
	wPublishN   = "publish_batched"
	wSubscribe  = "subscribe"
	wLatencyP50 = "latency_p50"
	wLatencyP99 = "latency_p99"
	wHeap       = "memory_heap_max"
	wRSS        = "memory_rss_max"
)

var workloadInfo = map[string]struct {
	label, unit string
	higher      bool
}{
	wPublish:    {"publish throughput", "msg/s", true},
	wPublishN:   {"publish, batched calls", "msg/s", true}, // "publish, N per call" in a report
	wSubscribe:  {"subscribe throughput (Router)", "msg/s", true},
	wLatencyP50: {"end-to-end latency p50", "ms", false},
	wLatencyP99: {"end-to-end latency p99", "ms", false},
	wHeap:       {"subscriber heap in use, max", "MiB", false},
	wRSS:        {"process RSS while consuming, max", "MiB", false},
	wSlow:       {"5 ms handler, 64 keys (Router)", "msg/s", true},
}

var workloadOrder = []string{wPublish, wPublishN, wSubscribe, wLatencyP50, wLatencyP99, wHeap, wRSS, wSlow}

// Result is one row: workload x size x transport.
type Result struct {
	Workload       string             `json:"workload"`
	Label          string             `json:"label"`
	Size           int                `json:"size_bytes"`
	Transport      string             `json:"transport"`
	Value          *float64           `json:"value"` // null when not measured
	Unit           string             `json:"unit"`
	HigherIsBetter bool               `json:"higher_is_better"`
	VsRedisstream  *float64           `json:"ratio_vs_redisstream"` // value / redisstream's value
	VsGoRedis      *float64           `json:"ratio_vs_goredis"`     // value / go-redis's value
	Messages       int64              `json:"messages"`
	Seconds        float64            `json:"seconds"`
	Extra          map[string]float64 `json:"extra,omitempty"`
	Notes          []string           `json:"notes,omitempty"`
}

func (r *Result) set(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	r.Value = &v
}

func (r *Result) note(s string) { r.Notes = append(r.Notes, s) }

func (r Result) failed(err error) Result {
	r.Value = nil
	r.note("failed: " + err.Error())
	return r
}

// Report is results.json.
type Report struct {
	Date         string            `json:"date"`
	GoVersion    string            `json:"go_version"`
	RedisVersion string            `json:"redis_version"`
	RedisAddr    string            `json:"redis"`
	CPUs         int               `json:"cpus"`
	GOMAXPROCS   int               `json:"gomaxprocs"`
	OSArch       string            `json:"os_arch"`
	Command      string            `json:"command"`
	Config       map[string]string `json:"config"`
	Seconds      float64           `json:"duration_seconds"`
	LoadAvgStart string            `json:"loadavg_start"` // /proc/loadavg 1, 5, 15 min
	LoadAvgEnd   string            `json:"loadavg_end"`
	Interrupted  bool              `json:"interrupted,omitempty"`
	Results      []Result          `json:"results"`
	Profiles     []string          `json:"cpu_profiles,omitempty"`
}

// finish fills labels, units and the ratio columns.
func (rep *Report) finish() {
	find := func(workload string, size int, transport string) *Result {
		for i := range rep.Results {
			r := &rep.Results[i]
			if r.Workload == workload && r.Size == size && r.Transport == transport {
				return r
			}
		}
		return nil
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		info := workloadInfo[r.Workload]
		r.Label, r.Unit, r.HigherIsBetter = info.label, info.unit, info.higher
		if r.Workload == wPublishN && rep.Config["pipeline"] != "" {
			r.Label = "publish, " + rep.Config["pipeline"] + " per call"
		}
		r.VsRedisstream, r.VsGoRedis = nil, nil
		if (r.Workload == wPublish || r.Workload == wPublishN || r.Workload == wSubscribe) && r.Messages > 0 {
			// CPU per message: less sensitive to other load than the rate
			if v, ok := r.Extra["cpu_bench_s"]; ok {
				r.Extra["cpu_bench_us_per_msg"] = v * 1e6 / float64(r.Messages)
			}
			if v, ok := r.Extra["cpu_redis_s"]; ok {
				r.Extra["cpu_redis_us_per_msg"] = v * 1e6 / float64(r.Messages)
			}
		}
		if r.Value == nil {
			continue
		}
		ratio := func(ref *Result) *float64 {
			if ref == nil || ref.Value == nil || *ref.Value == 0 {
				return nil
			}
			v := *r.Value / *ref.Value
			return &v
		}
		r.VsRedisstream = ratio(find(r.Workload, r.Size, refRedisstream))
		r.VsGoRedis = ratio(find(r.Workload, r.Size, refGoRedis))
	}
}

func (rep *Report) header() string {
	h := fmt.Sprintf("streamq side-by-side benchmark · %s · %s · Redis %s · %d CPUs (GOMAXPROCS %d) · %s · load average %s",
		rep.Date, rep.GoVersion, rep.RedisVersion, rep.CPUs, rep.GOMAXPROCS, rep.OSArch, rep.LoadAvgStart)
	if rep.LoadAvgEnd != "" {
		h += " (at the end: " + rep.LoadAvgEnd + ")"
	}
	return h
}

func fmtValue(v float64, unit string) string {
	switch unit {
	case "msg/s":
		return groupThousands(int64(math.Round(v)))
	case "ms":
		if v < 10 {
			return fmt.Sprintf("%.3f", v)
		}
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtRatio(p *float64) string {
	if p == nil {
		return "—"
	}
	switch {
	case *p >= 10:
		return fmt.Sprintf("%.1fx", *p)
	case *p >= 0.1:
		return fmt.Sprintf("%.2fx", *p)
	default:
		return fmt.Sprintf("%.2gx", *p)
	}
}

// writeTable prints the table: one row per workload x size x transport.
func (rep *Report) writeTable(w io.Writer) {
	fmt.Fprintln(w, rep.header())
	fmt.Fprintln(w, "ratios are value / reference value: above 1 is better for msg/s, below 1 is better for ms and MiB;")
	fmt.Fprintln(w, "CPU% is of one core during the measured window (other: every other process); CPU µs/msg is less sensitive to other load than msg/s")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "workload\tsize\ttransport\tvalue\tunit\tvs redisstream\tvs go-redis\tCPU% bench/redis/other\tCPU µs/msg bench/redis\t")
	prev := ""
	for _, r := range rep.sorted() {
		key := fmt.Sprintf("%s/%d", r.Workload, r.Size)
		if prev != "" && key != prev {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t")
		}
		prev = key
		val := "n/a"
		if r.Value != nil {
			val = fmtValue(*r.Value, r.Unit)
		}
		flag := ""
		if len(r.Notes) > 0 {
			flag = " *"
		}
		perMsg := "—"
		if b, ok := r.Extra["cpu_bench_us_per_msg"]; ok {
			perMsg = fmt.Sprintf("%.1f/%.1f", b, r.Extra["cpu_redis_us_per_msg"])
		}
		fmt.Fprintf(tw, "%s\t%dB\t%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Label, r.Size, r.Transport, val, flag, r.Unit,
			fmtRatio(r.VsRedisstream), fmtRatio(r.VsGoRedis), cpuShares(r), perMsg)
	}
	_ = tw.Flush()
	var notes []string
	seen := map[string]bool{}
	for _, r := range rep.sorted() {
		for _, n := range r.Notes {
			line := fmt.Sprintf("%s %dB %s: %s", r.Workload, r.Size, r.Transport, n)
			if !seen[line] {
				seen[line] = true
				notes = append(notes, line)
			}
		}
	}
	if n, of, med := rep.noise(); n > 0 {
		fmt.Fprintf(w, "\nWARNING: other processes on this machine used more than %.0f%% of a core during %d of %d measurements (median %.0f%%, see the CPU column): the figures are noisy\n",
			float64(noiseThreshold), n, of, med)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\n* notes:")
		for _, n := range notes {
			fmt.Fprintln(w, "  - "+n)
		}
	}
	fmt.Fprintf(w, "\ntotal run time %.0fs\n", rep.Seconds)
}

// sorted returns the results by workload order, size, then transport order.
func (rep *Report) sorted() []Result {
	wi := map[string]int{}
	for i, w := range workloadOrder {
		wi[w] = i
	}
	ti := map[string]int{}
	for i, t := range allTransports {
		ti[t.Name] = i
	}
	out := append([]Result(nil), rep.Results...)
	// insertion sort: small n, stable
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			a, b := out[j-1], out[j]
			less := wi[b.Workload] < wi[a.Workload] ||
				wi[b.Workload] == wi[a.Workload] && (b.Size < a.Size || b.Size == a.Size && ti[b.Transport] < ti[a.Transport])
			if !less {
				break
			}
			out[j-1], out[j] = b, a
		}
	}
	return out
}

func (rep *Report) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rep.Results = rep.sorted()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chart.svg"), []byte(rep.chart()), 0o644)
}

// cpuShares is "bench/redis/other" CPU of the measured window, in percent of one core.
func cpuShares(r Result) string {
	b, ok := r.Extra["cpu_bench_pct"]
	if !ok {
		return "—"
	}
	red := "—"
	if v, ok := r.Extra["cpu_redis_pct"]; ok {
		red = fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.0f/%s/%.0f", b, red, r.Extra["cpu_other_pct"])
}

// noiseThreshold: CPU used by other processes (percent of one core) above which a
// measurement is called noisy.
const noiseThreshold = 25

func countAbove(xs []float64, t float64) int {
	n := 0
	for _, x := range xs {
		if x > t {
			n++
		}
	}
	return n
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// noise counts the measurements during which other processes used more than
// noiseThreshold of a core, of how many, and the median share.
func (rep *Report) noise() (n, of int, med float64) {
	var other []float64
	for _, r := range rep.Results {
		if v, ok := r.Extra["cpu_other_pct"]; ok && (r.Workload != wLatencyP99 && r.Workload != wRSS) {
			other = append(other, v)
		}
	}
	return countAbove(other, noiseThreshold), len(other), median(other)
}
