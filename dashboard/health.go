package dashboard

import (
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// Severities of a health state, worst last.
const (
	sevOK       = "ok"
	sevWarning  = "warning"
	sevCritical = "critical"
)

// Problems a health state names.
const (
	probNoMember     = "no-live-member"        // no member consumes the group
	probLagGrowing   = "lag-growing"           // the lag rose over the recent window
	probNotConsuming = "not-consuming"         // nothing was delivered while lag > 0
	probDeadLetters  = "dead-letters-arriving" // dead letters arrived in the recent window
	probExpired      = "expired"               // retention no longer waits for the group (group expiry)
)

// minTrend is how many samples a trend needs (growing lag, nothing consumed).
const minTrend = 3

// healthView is the health of a topic or a group: its worst severity and every problem.
type healthView struct {
	State    string        `json:"state"` // "ok", "warning" or "critical"
	Problems []problemView `json:"problems"`
}

// problemView is one problem.
type problemView struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Text     string `json:"text"`
}

func rank(sev string) int {
	switch sev {
	case sevCritical:
		return 2
	case sevWarning:
		return 1
	}
	return 0
}

func (v *healthView) add(code, sev, format string, args ...any) {
	v.Problems = append(v.Problems, problemView{Code: code, Severity: sev, Text: fmt.Sprintf(format, args...)})
	if rank(sev) > rank(v.State) {
		v.State = sev
	}
}

func okHealth() healthView { return healthView{State: sevOK, Problems: []problemView{}} }

// groupFacts is what a group's health is judged from: now, and over the recent window.
type groupFacts struct {
	Name        string
	Members     int   // live members now
	Lag         int64 // now
	Pending     int64 // now
	DeadLetters int   // dead letters of the group that arrived within the recent window
	Expired     bool  // no live member for the group expiry on some partition (admin.GroupLiveness)
	trend       []admin.HistoryGroup
	span        time.Duration // between the first and last sample of trend
}

// factsOf completes f with the group's samples of rc.
func (f groupFacts) with(rc recent) groupFacts {
	var first, last time.Time
	for _, s := range rc {
		if g, ok := s.Groups[f.Name]; ok {
			if first.IsZero() {
				first = s.Time
			}
			last = s.Time
			f.trend = append(f.trend, g)
		}
	}
	f.span = last.Sub(first)
	return f
}

// groupHealth judges one group.
func groupHealth(f groupFacts) healthView {
	v := okHealth()
	waiting := f.Lag + f.Pending
	switch {
	case f.Members == 0 && waiting > 0:
		v.add(probNoMember, sevCritical, "no live member: %s waiting and nobody consumes them", plural(waiting, "message"))
	case f.Members == 0:
		v.add(probNoMember, sevWarning, "no live member: new messages will wait")
	case f.stalled():
		v.add(probNotConsuming, sevCritical, "nothing consumed in the last %s while %s wait", roundSpan(f.span), plural(f.Lag, "message"))
	}
	if first, last, ok := f.growth(); ok {
		v.add(probLagGrowing, sevWarning, "lag grew from %d to %d in the last %s", first, last, roundSpan(f.span))
	}
	if f.Expired {
		v.add(probExpired, sevWarning, "expired: no live member for the group expiry, retention no longer waits for it (what it loses is counted)")
	}
	if f.DeadLetters > 0 {
		v.add(probDeadLetters, sevWarning, "%s in the last %s", plural(int64(f.DeadLetters), "dead letter"), roundSpan(recentWindow))
	}
	return v
}

// stalled: the group has a lag in every recent sample and delivered nothing across them.
func (f groupFacts) stalled() bool {
	if len(f.trend) < minTrend || f.Lag == 0 {
		return false
	}
	for _, g := range f.trend {
		if g.Lag == 0 {
			return false
		}
	}
	return f.trend[len(f.trend)-1].EntriesRead == f.trend[0].EntriesRead
}

// growth reports a lag that rose by at least 10 messages and 10% over the recent samples
// and did not fall in the latest one.
func (f groupFacts) growth() (first, last int64, ok bool) {
	n := len(f.trend)
	if n < minTrend {
		return 0, 0, false
	}
	first, last = f.trend[0].Lag, f.trend[n-1].Lag
	rising := last >= f.trend[n-2].Lag && last-first >= max(10, first/10)
	return first, last, rising
}

// topicHealth gathers the groups' problems (each named after its group) and the topic's own:
// dead letters arriving that no group's health names (unattributed: of no group, or of a
// group that is gone).
func topicHealth(names []string, groups []healthView, unattributed int64) healthView {
	v := okHealth()
	for i, g := range groups {
		for _, p := range g.Problems {
			v.add(p.Code, p.Severity, "group %s: %s", names[i], p.Text)
		}
	}
	if unattributed > 0 {
		v.add(probDeadLetters, sevWarning, "%s in the last %s", plural(unattributed, "dead letter"), roundSpan(recentWindow))
	}
	return v
}

func plural(n int64, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// roundSpan renders a duration to the second ("4m0s" reads "4m").
func roundSpan(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return d.String()
}
