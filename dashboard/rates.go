package dashboard

import (
	"net/http"
	"sort"

	"github.com/streamq-dev/streamq/admin"
)

// ratesView is GET api/topics/{topic}/rates: one point per pair of consecutive samples.
type ratesView struct {
	Topic      string      `json:"topic"`
	IntervalMs int64       `json:"intervalMs"`
	WindowMs   int64       `json:"windowMs"`
	Groups     []string    `json:"groups"` // every group in any point, sorted
	Points     []ratePoint `json:"points"` // oldest first
}

// ratePoint is the rates between two samples, at the later one.
type ratePoint struct {
	Time        int64                 `json:"t"`           // unix ms, Redis server clock
	PublishRate float64               `json:"publishRate"` // entries appended per second
	Length      int64                 `json:"length"`
	Groups      map[string]groupPoint `json:"groups"`
}

// groupPoint is one group at a point.
type groupPoint struct {
	// ConsumeRate is entries delivered per second; null when the group is new at this point.
	ConsumeRate *float64 `json:"consumeRate"`
	Lag         int64    `json:"lag"`
	Pending     int64    `json:"pending"`
}

func (h *Handler) rates(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	samples, err := h.sampler.watch(r.Context(), topic)
	if err != nil {
		return nil, err
	}
	v := ratesView{
		Topic: topic, IntervalMs: ms(h.opts.SampleInterval), WindowMs: ms(h.opts.SampleWindow),
		Points: ratePoints(samples),
	}
	v.Groups = pointGroups(v.Points)
	return v, nil
}

// ratePoints turns consecutive samples into rates. Counters that went down (a reset offset)
// count as 0.
func ratePoints(samples []admin.TopicCounters) []ratePoint {
	out := []ratePoint{}
	if len(samples) == 0 {
		return out
	}
	prev := samples[0]
	for _, cur := range samples[1:] {
		dt := cur.Time.Sub(prev.Time).Seconds()
		if dt <= 0 { // no later than the previous sample: skipped
			continue
		}
		out = append(out, ratePointOf(prev, cur, dt))
		prev = cur
	}
	return out
}

func ratePointOf(prev, cur admin.TopicCounters, dt float64) ratePoint {
	p := ratePoint{
		Time: cur.Time.UnixMilli(), PublishRate: perSecond(cur.EntriesAdded-prev.EntriesAdded, dt),
		Length: cur.Length, Groups: map[string]groupPoint{},
	}
	for name, g := range cur.Groups {
		gp := groupPoint{Lag: g.Lag, Pending: g.Pending}
		if was, ok := prev.Groups[name]; ok {
			r := perSecond(g.EntriesRead-was.EntriesRead, dt)
			gp.ConsumeRate = &r
		}
		p.Groups[name] = gp
	}
	return p
}

func perSecond(delta int64, seconds float64) float64 {
	return float64(max(delta, 0)) / seconds
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

// publishRate is topic's latest publish rate, nil until it has two samples.
func (h *Handler) publishRate(topic string) *float64 {
	prev, last, ok := h.sampler.lastTwo(topic)
	if !ok {
		return nil
	}
	points := ratePoints([]admin.TopicCounters{prev, last})
	if len(points) == 0 {
		return nil
	}
	return &points[0].PublishRate
}

// consumeRates are topic's latest consume rate per group (absent until two samples).
func (h *Handler) consumeRates(topic string) map[string]*float64 {
	out := map[string]*float64{}
	prev, last, ok := h.sampler.lastTwo(topic)
	if !ok {
		return out
	}
	for _, p := range ratePoints([]admin.TopicCounters{prev, last}) {
		for name, g := range p.Groups {
			out[name] = g.ConsumeRate
		}
	}
	return out
}
