package dashboard

import (
	"net/http"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// maxChartPoints bounds the points of one rates answer: longer histories are thinned.
const maxChartPoints = 400

// ratesView is GET api/topics/{topic}/rates: one point per pair of consecutive samples of
// the topic's history (admin.History), over the window.
type ratesView struct {
	Topic      string      `json:"topic"`
	IntervalMs int64       `json:"intervalMs"`
	WindowMs   int64       `json:"windowMs"`
	Groups     []string    `json:"groups"` // every group in any point, sorted
	Points     []ratePoint `json:"points"` // oldest first
	// NowMs is the Redis server's clock (unix ms): the charts run to it, so a history that
	// stopped being written shows as a gap up to now. GapAfterMs is the time between two
	// samples past which no sample was recorded between them: a gap (ratePoint.Gap).
	NowMs      int64 `json:"nowMs"`
	GapAfterMs int64 `json:"gapAfterMs"`
	// Freshness says how fresh the history is, and why it is not written when it is not.
	Freshness freshnessView `json:"freshness"`
}

// ratePoint is the rates between two samples, at the later one.
type ratePoint struct {
	Time int64 `json:"t"` // unix ms, Redis server clock
	// Gap: no sample was recorded for more than GapAfterMs before this one; the rates over
	// the gap are null (an average over it would draw a line across it).
	Gap bool `json:"gap"`
	// PublishRate is messages published per second (not retries); null at a gap.
	PublishRate *float64              `json:"publishRate"`
	Length      int64                 `json:"length"`  // published messages held
	Retries     int64                 `json:"retries"` // retry entries held
	DLQLength   int64                 `json:"dlqLength"`
	Groups      map[string]groupPoint `json:"groups"`
}

// groupPoint is one group at a point.
type groupPoint struct {
	// ConsumeRate is entries delivered per second; null when the group is new at this point,
	// or at a gap.
	ConsumeRate *float64 `json:"consumeRate"`
	Lag         int64    `json:"lag"`
	Pending     int64    `json:"pending"`
	TimeLagMs   int64    `json:"timeLagMs"`
	Members     int      `json:"members"`
}

// rates answers ?windowMs=N (default SampleWindow, at most HistoryRetention).
func (h *Handler) rates(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	window, err := queryInt(r.URL.Query(), "windowMs", int(ms(h.opts.SampleWindow)), 1000, int(ms(h.opts.HistoryRetention)))
	if err != nil {
		return nil, err
	}
	h.sampler.view(r.Context(), topic)
	samples, err := h.adm.History(r.Context(), topic, time.Duration(window)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	now, err := h.adm.ServerTime(r.Context())
	if err != nil {
		return nil, err
	}
	_, refused := h.sampler.notWritten(topic)
	gap := h.staleAfter()
	v := ratesView{
		Topic: topic, IntervalMs: ms(h.opts.SampleInterval), WindowMs: int64(window), NowMs: now.UnixMilli(), GapAfterMs: ms(gap),
		Points: ratePoints(thin(samples, maxChartPoints), gap), Freshness: freshnessOf(samples, samples, refused, now, gap),
	}
	v.Groups = pointGroups(v.Points)
	return v, nil
}

// thin keeps at most n samples, evenly spread, the newest always.
func thin(samples []admin.HistorySample, n int) []admin.HistorySample {
	if len(samples) <= n {
		return samples
	}
	step := (len(samples) + n - 1) / n
	out := make([]admin.HistorySample, 0, n+1)
	for i := len(samples) - 1; i >= 0; i -= step {
		out = append(out, samples[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ratePoints turns consecutive samples into rates. Counters that went down (a reset offset)
// count as 0. Two samples more than gapAfter apart make a gap: the later one's rates are null.
func ratePoints(samples []admin.HistorySample, gapAfter time.Duration) []ratePoint {
	out := []ratePoint{}
	if len(samples) == 0 {
		return out
	}
	prev := samples[0]
	for _, cur := range samples[1:] {
		dt := cur.Time.Sub(prev.Time)
		if dt <= 0 { // no later than the previous sample: skipped
			continue
		}
		out = append(out, ratePointOf(prev, cur, dt.Seconds(), gapAfter > 0 && dt > gapAfter))
		prev = cur
	}
	return out
}

func ratePointOf(prev, cur admin.HistorySample, dt float64, gap bool) ratePoint {
	p := ratePoint{
		Time: cur.Time.UnixMilli(), Gap: gap, PublishRate: perSecond(cur.Published-prev.Published, dt, gap),
		Length: cur.Length, Retries: cur.Retries, DLQLength: cur.DLQLength, Groups: map[string]groupPoint{},
	}
	for name, g := range cur.Groups {
		gp := groupPoint{Lag: g.Lag, Pending: g.Pending, TimeLagMs: ms(g.TimeLag), Members: g.Members}
		if was, ok := prev.Groups[name]; ok {
			gp.ConsumeRate = perSecond(g.EntriesRead-was.EntriesRead, dt, gap)
		}
		p.Groups[name] = gp
	}
	return p
}

// perSecond is delta over seconds; nil across a gap.
func perSecond(delta int64, seconds float64, gap bool) *float64 {
	if gap {
		return nil
	}
	r := float64(max(delta, 0)) / seconds
	return &r
}

func pointGroups(points []ratePoint) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, p := range points {
		for name := range p.Groups {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// recentWindow is the history the latest rates and the health states are read from.
const recentWindow = 5 * time.Minute

// recent is a topic's history over recentWindow, for its latest rates and health.
type recent []admin.HistorySample

// latest is the newest rate point, false until there are two samples.
func (rc recent) latest() (ratePoint, bool) {
	if len(rc) < 2 {
		return ratePoint{}, false
	}
	points := ratePoints([]admin.HistorySample(rc[len(rc)-2:]), 0)
	if len(points) == 0 {
		return ratePoint{}, false
	}
	return points[0], true
}

// publishRate is the latest publish rate, nil until there are two samples.
func (rc recent) publishRate() *float64 {
	p, ok := rc.latest()
	if !ok {
		return nil
	}
	return p.PublishRate
}

// consumeRates are the latest consume rate per group (absent until two samples).
func (rc recent) consumeRates() map[string]*float64 {
	out := map[string]*float64{}
	if p, ok := rc.latest(); ok {
		for name, g := range p.Groups {
			out[name] = g.ConsumeRate
		}
	}
	return out
}
