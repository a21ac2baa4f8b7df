package main

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

var transportColor = map[string]string{
	"streamq-1p":       "#5b9bd5",
	"streamq-8p":       "#1f4e8c",
	"streamq-1p-plain": "#a9c8ec",
	"streamq-8p-plain": "#8fb3e0",
	"streamq-8p-uuid":  "#3d6fb0",
	refRedisstream:     "#e8833a",
	refGoRedis:         "#9e9e9e",
	refRouter:          "#bdbdbd",
}

type chartGroup struct {
	label    string
	workload string
	size     int
}

type chartPanel struct {
	title  string
	log    bool
	groups []chartGroup
}

// chart renders the results as an SVG of grouped bar charts, one panel per workload kind.
func (rep *Report) chart() string {
	sizes := func(workloads ...string) []chartGroup {
		var gs []chartGroup
		seen := map[string]bool{}
		for _, r := range rep.sorted() {
			for _, w := range workloads {
				key := fmt.Sprintf("%s/%d", w, r.Size)
				if r.Workload == w && !seen[key] {
					seen[key] = true
					gs = append(gs, chartGroup{label: "", workload: w, size: r.Size})
				}
			}
		}
		return gs
	}
	var panels []chartPanel
	if gs := sizes(wPublish); len(gs) > 0 {
		for i := range gs {
			gs[i].label = fmt.Sprintf("%d-byte messages", gs[i].size)
		}
		panels = append(panels, chartPanel{title: "Publish throughput, 64 publishers (msg/s, higher is better)", groups: gs})
	}
	if gs := sizes(wPublishN); len(gs) > 0 {
		for i := range gs {
			gs[i].label = fmt.Sprintf("%d-byte messages", gs[i].size)
		}
		panels = append(panels, chartPanel{title: "Publish throughput, 64 publishers, " + rep.Config["pipeline"] + " messages per call (msg/s, higher is better)", groups: gs})
	}
	if gs := sizes(wSubscribe); len(gs) > 0 {
		for i := range gs {
			gs[i].label = fmt.Sprintf("%d-byte messages", gs[i].size)
		}
		panels = append(panels, chartPanel{title: "Subscribe throughput through a Watermill Router (msg/s, higher is better)", groups: gs})
	}
	if gs := sizes(wLatencyP50, wLatencyP99); len(gs) > 0 {
		for i := range gs {
			gs[i].label = fmt.Sprintf("%s, %d B", map[string]string{wLatencyP50: "p50", wLatencyP99: "p99"}[gs[i].workload], gs[i].size)
		}
		rate := thousands(rep.Config["latency_rate"])
		panels = append(panels, chartPanel{title: "End-to-end latency at " + rate + " msg/s (ms, log scale, lower is better)", log: true, groups: gs})
	}
	if gs := sizes(wHeap, wRSS); len(gs) > 0 {
		for i := range gs {
			gs[i].label = fmt.Sprintf("%s, %d B", map[string]string{wHeap: "heap in use, max", wRSS: "process RSS, max"}[gs[i].workload], gs[i].size)
		}
		panels = append(panels, chartPanel{title: "Subscriber memory, " + thousands(rep.Config["memory_backlog"]) + "-message backlog (MiB, lower is better)", groups: gs})
	}

	const width, panelH, left, right = 960.0, 280.0, 70.0, 20.0
	top := 80.0
	height := top + float64(len(panels))*panelH + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="16" font-weight="bold">streamq vs watermill-redisstream vs go-redis (Redis Streams)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%.0f" y="42" font-size="11" fill="#555">%s</text>`+"\n", left, html.EscapeString(fmt.Sprintf("%s · %s · Redis %s · %d CPUs", rep.Date, rep.GoVersion, rep.RedisVersion, rep.CPUs)))
	if n, of, med := rep.noise(); n > 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="42" font-size="11" fill="#b00" text-anchor="end">%s</text>`+"\n", width-right,
			html.EscapeString(fmt.Sprintf("noisy: other processes used %.0f%% of a core (median) in %d of %d measurements", med, n, of)))
	}
	// legend
	lx := left
	for _, t := range rep.transports() {
		fmt.Fprintf(&b, `<rect x="%.0f" y="54" width="12" height="12" fill="%s"/><text x="%.0f" y="64" font-size="12">%s</text>`+"\n", lx, transportColor[t], lx+16, html.EscapeString(t))
		lx += 30 + 7*float64(len(t))
	}
	for i, p := range panels {
		rep.drawPanel(&b, p, left, top+float64(i)*panelH, width-left-right, panelH)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// transports lists the transports present in the results, in table order.
func (rep *Report) transports() []string {
	var out []string
	for _, t := range allTransports {
		for _, r := range rep.Results {
			if r.Transport == t.Name {
				out = append(out, t.Name)
				break
			}
		}
	}
	return out
}

func (rep *Report) value(workload string, size int, transport string) (float64, bool) {
	for _, r := range rep.Results {
		if r.Workload == workload && r.Size == size && r.Transport == transport {
			if r.Value == nil {
				return 0, false
			}
			return *r.Value, true
		}
	}
	return 0, false
}

func (rep *Report) drawPanel(b *strings.Builder, p chartPanel, x, y, w, h float64) {
	const titleH, labelH, valueH = 24.0, 22.0, 16.0
	plotTop, plotBottom := y+titleH+valueH, y+h-labelH-8
	plotH := plotBottom - plotTop
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="13" font-weight="bold">%s</text>`+"\n", x, y+16, html.EscapeString(p.title))

	// bars per group: the transports that have a row for this group
	type bar struct {
		t  string
		v  float64
		ok bool
	}
	groups := make([][]bar, len(p.groups))
	maxV, minPos := 0.0, math.Inf(1)
	for i, g := range p.groups {
		for _, t := range rep.transports() {
			v, ok := rep.value(g.workload, g.size, t)
			has := ok
			if !ok {
				// a row exists but has no value: show n/a; no row at all: skip
				found := false
				for _, r := range rep.Results {
					if r.Workload == g.workload && r.Size == g.size && r.Transport == t {
						found = true
					}
				}
				if !found {
					continue
				}
			}
			groups[i] = append(groups[i], bar{t: t, v: v, ok: has})
			if has {
				maxV = math.Max(maxV, v)
				if v > 0 {
					minPos = math.Min(minPos, v)
				}
			}
		}
	}
	if maxV <= 0 {
		maxV = 1
	}
	// scale
	var scale func(v float64) float64
	var ticks []float64
	if p.log {
		lo := math.Pow(10, math.Floor(math.Log10(math.Min(minPos, maxV))))
		hi := math.Pow(10, math.Ceil(math.Log10(maxV)))
		if hi <= lo {
			hi = lo * 10
		}
		for t := lo; t <= hi*1.001; t *= 10 {
			ticks = append(ticks, t)
		}
		scale = func(v float64) float64 {
			if v <= lo {
				return 0
			}
			return plotH * (math.Log10(v) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo))
		}
	} else {
		step := niceStep(maxV / 5)
		top := math.Ceil(maxV/step) * step
		for t := 0.0; t <= top*1.0001; t += step {
			ticks = append(ticks, t)
		}
		scale = func(v float64) float64 { return plotH * v / top }
	}
	for _, t := range ticks {
		ty := plotBottom - scale(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, x, ty, x+w, ty)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="#666" text-anchor="end">%s</text>`+"\n", x-6, ty+3, shortNum(t))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x, plotBottom, x+w, plotBottom)
	if len(p.groups) == 0 {
		return
	}
	gw := w / float64(len(p.groups))
	for i, g := range p.groups {
		gx := x + float64(i)*gw
		bars := groups[i]
		if len(bars) == 0 {
			continue
		}
		bw := math.Min(60, (gw-30)/float64(len(bars)))
		start := gx + (gw-bw*float64(len(bars)))/2
		for j, br := range bars {
			bx := start + float64(j)*bw
			if !br.ok {
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="#a00" text-anchor="middle">n/a</text>`+"\n", bx+bw/2, plotBottom-4)
				continue
			}
			bh := math.Max(scale(br.v), 1)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				bx+2, plotBottom-bh, bw-4, bh, transportColor[br.t], html.EscapeString(br.t), shortNum(br.v))
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%s</text>`+"\n", bx+bw/2, plotBottom-bh-3, shortNum(br.v))
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`+"\n", gx+gw/2, plotBottom+16, html.EscapeString(g.label))
	}
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func shortNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return trimZero(fmt.Sprintf("%.2f", v))
	case a == 0:
		return "0"
	default:
		return trimZero(fmt.Sprintf("%.3f", v))
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func thousands(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return s
	}
	return groupThousands(n)
}
