package dashboard

import (
	"context"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// freshnessView says where a topic's rates and lag trend come from and how fresh they are:
// the history kept in Redis, this dashboard's own reads while Redis refuses the history's
// writes, or, when neither is recent, the newest sample there is, marked stale.
type freshnessView struct {
	// LastSample is the newest sample the figures come from; LastRecorded the newest in the
	// history kept in Redis. Null when there is none.
	LastSample   jsonTime `json:"lastSample"`
	LastRecorded jsonTime `json:"lastRecorded"`
	// Live: the history is not written (NotWritten says why), the figures come from this
	// dashboard's reads since LastRecorded.
	Live bool `json:"live"`
	// Stale: LastSample is older than three sample intervals; the figures are as of it.
	Stale      bool   `json:"stale"`
	NotWritten string `json:"notWritten"`
	// Text says it for a person; "" when the figures are fresh from the history.
	Text string `json:"text"`
}

// staleAfter is the age past which the newest sample makes the figures stale: three of the
// longer of the sampler's intervals.
func (h *Handler) staleAfter() time.Duration {
	return 3 * max(h.opts.SampleInterval, h.opts.HistoryInterval)
}

// recentHistory reads topic's history over recentWindow and adds the samples this dashboard
// took after its newest but could not record, for its latest rates and health, and says how
// fresh they are at now.
func (h *Handler) recentHistory(ctx context.Context, topic string, now time.Time) (recent, freshnessView, error) {
	recorded, err := h.adm.History(ctx, topic, recentWindow)
	if err != nil {
		return nil, freshnessView{}, err
	}
	unwritten, refused := h.sampler.notWritten(topic)
	rc := merged(recorded, unwritten)
	return rc, freshnessOf(recorded, rc, refused, now, h.staleAfter()), nil
}

// merged is recorded followed by the samples of more that are newer than its newest, by time.
func merged(recorded, more []admin.HistorySample) recent {
	out := append(recent(nil), recorded...)
	var newest time.Time
	if len(recorded) > 0 {
		newest = recorded[len(recorded)-1].Time
	}
	for _, s := range more {
		if s.Time.After(newest) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// freshnessOf judges rc (recorded, then the samples not written) at now.
func freshnessOf(recorded []admin.HistorySample, rc recent, refused error, now time.Time, staleAfter time.Duration) freshnessView {
	var f freshnessView
	if len(recorded) > 0 {
		f.LastRecorded = jsonTime(recorded[len(recorded)-1].Time)
	}
	if len(rc) == 0 {
		return f
	}
	last := rc[len(rc)-1].Time
	f.LastSample = jsonTime(last)
	f.Stale = now.Sub(last) > staleAfter
	f.Live = refused != nil && len(rc) > len(recorded)
	if refused != nil {
		f.NotWritten = refused.Error()
	}
	f.Text = f.text(now)
	return f
}

func (f freshnessView) text(now time.Time) string {
	why := ""
	if f.NotWritten != "" {
		why = "; the history is not written while Redis refuses writes"
	}
	switch {
	case f.Stale:
		return "stale: figures as of the last sample, " + at(time.Time(f.LastSample), now) + why
	case f.Live:
		since := "anything"
		if !time.Time(f.LastRecorded).IsZero() {
			since = at(time.Time(f.LastRecorded), now)
		}
		return "live: figures from this dashboard's reads; the history is not written since " + since + " (Redis refuses writes)"
	}
	return ""
}

// staleSince is when the figures of f date from when they are stale, zero otherwise.
func (f freshnessView) staleSince() time.Time {
	if !f.Stale {
		return time.Time{}
	}
	return time.Time(f.LastSample)
}

// growthHistory is the history a growing lag's start is looked for in: SampleWindow of it,
// with the samples not written, when some group's lag grows over st.recent; st.recent
// otherwise (no read).
func (h *Handler) growthHistory(ctx context.Context, st topicState) (recent, error) {
	grows := false
	for _, g := range st.lag.Groups {
		_, _, ok := groupFacts{Name: g.Group}.with(st.recent).growth()
		grows = grows || ok
	}
	if !grows {
		return st.recent, nil
	}
	long, err := h.adm.History(ctx, st.lag.Topic, h.opts.SampleWindow)
	if err != nil {
		return nil, err
	}
	unwritten, _ := h.sampler.notWritten(st.lag.Topic)
	return merged(long, unwritten), nil
}
