package dashboard

import (
	"fmt"
	"strings"
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
	probOutage       = "downstream-outage"     // partitions wait out a downstream outage (streamq.Outage)
	probOutageState  = "outage-unknown"        // no outage record, and Redis refuses its write
	probPaused       = "paused"                // an operator paused the group (admin.PauseGroup)
)

// minTrend is how many samples a trend needs (growing lag, nothing consumed).
const minTrend = 3

// healthView is the health of a topic or a group: its worst severity and every problem.
type healthView struct {
	State    string        `json:"state"` // "ok", "warning" or "critical"
	Problems []problemView `json:"problems"`
}

// problemView is one problem: what is wrong, since when (as far as the data tells), and
// the next step.
type problemView struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Text     string `json:"text"` // says since when too, when Since is known
	// Since is since when the problem exists, as the data tells it: when a member was last
	// seen, the oldest waiting message, the first sample of a growing lag, the expiry, the
	// first dead letter of the window, the first publish refused; null when unknown.
	Since jsonTime `json:"since"`
	// Next is the next step to take; Command the CLI command of it ("" when none).
	Next    string `json:"next"`
	Command string `json:"command"`
	// Group is the group a topic's problem is of ("" for the topic's own and on a group).
	Group string `json:"group,omitempty"`
	// Detail says more, on a line of its own: the member seen last, with its host and PID.
	Detail string `json:"detail,omitempty"`
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

// add adds a problem and returns it, for since and then.
func (v *healthView) add(code, sev, format string, args ...any) *problemView {
	v.Problems = append(v.Problems, problemView{Code: code, Severity: sev, Text: fmt.Sprintf(format, args...)})
	if rank(sev) > rank(v.State) {
		v.State = sev
	}
	return &v.Problems[len(v.Problems)-1]
}

// since records t as since when p exists and appends what to its text, with t and its age
// at now ("; no member seen since 2026-12-01 19:55:15 UTC (12m ago)"); a zero t appends
// unknown instead (nothing when unknown is "").
func (p *problemView) since(what string, t, now time.Time, unknown string) *problemView {
	switch {
	case !t.IsZero():
		p.Since = jsonTime(t)
		p.Text += "; " + what + " " + at(t, now)
	case unknown != "":
		p.Text += "; " + unknown
	}
	return p
}

// then sets the next step and its CLI command.
func (p *problemView) then(next, command string) {
	p.Next, p.Command = next, command
}

// age renders a duration to the second under an hour ("12m34s"), to the minute under two
// days ("2h5m"), else to the hour ("3d4h").
func age(d time.Duration) string {
	switch {
	case d < time.Hour:
		return roundSpan(d)
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// cli is a streamq command line, each argument quoted for a POSIX shell when it needs it.
func cli(args ...string) string {
	out := "streamq"
	for _, a := range args {
		out += " " + shellArg(a)
	}
	return out
}

func shellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:/@=+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

func okHealth() healthView { return healthView{State: sevOK, Problems: []problemView{}} }

// groupFacts is what a group's health is judged from: now, and over the recent window.
type groupFacts struct {
	Topic, Name string
	Now         time.Time     // the Redis server's clock
	Members     int           // live members now
	Lag         int64         // now
	Pending     int64         // now
	TimeLag     time.Duration // the age of the oldest message still to deliver
	DeadLetters int           // dead letters of the group that arrived within the recent window
	FirstDead   time.Time     // when the first of them failed
	Expired     bool          // no live member for the group expiry on some partition (admin.GroupLiveness)
	// ExpiredSince and LastSeen are admin.GroupLiveness's: since when retention no longer
	// waits for the group, when a member was last seen (its last heartbeat or leave, or a
	// partition's record of it; zero: never recorded), and LastMember the one that was.
	ExpiredSince, LastSeen time.Time
	LastMember             *admin.LastMember
	// Outages are the partitions waiting out a downstream outage (admin.Outages);
	// OutageUnknown those whose outage state is unknown because Redis refuses the record's
	// write (OutageRefused).
	Outages       []admin.Outage
	OutageUnknown []int
	OutageRefused error
	// Paused: an operator paused the group (admin.PauseGroup), since PausedSince.
	Paused      bool
	PausedSince time.Time
	// StaleSince, when not zero, is the time of the newest sample the trend has: the history
	// is stale (freshnessView).
	StaleSince time.Time
	trend      []admin.HistoryGroup
	first      time.Time     // the time of trend's first sample
	span       time.Duration // between the first and last sample of trend
	// growthFrom is when a growing lag began to grow, its lag then growthLag; growthEarlier:
	// it is the oldest sample read, the growth may have begun before.
	growthFrom    time.Time
	growthLag     int64
	growthEarlier bool
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
	f.first, f.span = first, last.Sub(first)
	return f.since(rc)
}

// groupHealth judges one group.
func groupHealth(f groupFacts) healthView {
	v := okHealth()
	waiting := f.Lag + f.Pending
	switch {
	case f.Members == 0 && waiting > 0:
		v.add(probNoMember, sevCritical, "no live member: %s waiting and nobody consumes them", plural(waiting, "message")).
			since("no member seen since", f.LastSeen, f.Now, "no member seen yet").lastMember(f.LastMember).
			then("start or restart a Subscriber of group "+f.Name+"; see it live", cli("groups", f.Topic))
	case f.Members == 0:
		v.add(probNoMember, sevWarning, "no live member: new messages will wait").
			since("no member seen since", f.LastSeen, f.Now, "no member seen yet").lastMember(f.LastMember).
			then("start a Subscriber of group "+f.Name+", or delete the group if nobody needs it", cli("groups", f.Topic))
	case f.Paused: // named below: it says why nothing is consumed
	case len(f.Outages) > 0:
		outageProblem(&v, f) // it says why nothing is consumed
	case f.stalled():
		v.add(probNotConsuming, sevCritical, "nothing consumed in the last %s while %s wait", roundSpan(f.span), plural(f.Lag, "message")).
			since("the oldest waits since", oldest(f.Now, f.TimeLag), f.Now, "").
			then("find the entries the members are stuck on (a handler that hangs or fails)", cli("pending", f.Topic, f.Name, "--sort", "deliveries"))
	}
	if f.Paused {
		v.add(probPaused, sevWarning, "paused by an operator: %s wait", plural(waiting, "message")).
			since("since", f.PausedSince, f.Now, "").
			then("resume the group when it may deliver again (every member goes on where it stopped)", cli("resume", f.Topic, f.Name))
	}
	if len(f.OutageUnknown) > 0 {
		outageUnknownProblem(&v, f)
	}
	if _, last, ok := f.growth(); ok && !f.Paused { // a paused group's lag grows: the pause says why
		growthProblem(&v, f, last)
	}
	if f.Expired {
		v.add(probExpired, sevWarning, "expired: no live member for the group expiry, retention no longer waits for it (what it loses is counted)").
			since("expired since", f.ExpiredSince, f.Now, "").
			then("start a member to make retention wait again (the losses are per partition), or delete the group if nobody needs it", cli("stats", f.Topic, f.Name))
	}
	if f.DeadLetters > 0 {
		v.add(probDeadLetters, sevWarning, "%s in the last %s", plural(int64(f.DeadLetters), "dead letter"), roundSpan(recentWindow)).
			since("arriving since", f.FirstDead, f.Now, "").
			then("read the reasons, fix the cause, then replay them", cli("dlq", "list", f.Topic, "--group", f.Name, "--failed-within", roundSpan(recentWindow)))
	}
	return v
}

// growthProblem says the lag grows: from what to last since it began, and the step that fits
// the group (adding members helps only a group whose members are live and deliver).
func growthProblem(v *healthView, f groupFacts, last int64) {
	what := "growing since"
	if f.growthEarlier {
		what = "growing since at least"
	}
	p := v.add(probLagGrowing, sevWarning, "lag grew from %d to %d", f.growthLag, last).since(what, f.growthFrom, f.Now, "")
	if !f.StaleSince.IsZero() {
		p.Text += "; stale: as of the last sample, " + at(f.StaleSince, f.Now)
	}
	switch {
	case f.Members == 0:
		p.then("the group has no live member: start a Subscriber of group "+f.Name+" (members added to none consume nothing until one runs)", cli("groups", f.Topic))
	case len(f.Outages) > 0:
		p.then("partitions wait out a downstream outage: fix the service the handler calls; adding members would not deliver more", cli("stats", f.Topic, f.Name))
	case len(f.OutageUnknown) > 0:
		p.then("Redis refuses writes, so an outage cannot be recorded: find whether the handler's downstream is down before adding members", cli("stats", f.Topic, f.Name))
	default:
		p.then("members consume slower than messages arrive: add members (up to one per partition) or find the slow partitions", cli("lag", f.Topic, f.Name))
	}
}

// outageUnknownProblem names the partitions whose outage state is unknown: no record, and
// Redis refuses its write now.
func outageUnknownProblem(v *healthView, f groupFacts) {
	parts := make([]string, len(f.OutageUnknown))
	for i, p := range f.OutageUnknown {
		parts[i] = fmt.Sprint(p)
	}
	which := "partitions "
	if len(parts) == 1 {
		which = "partition "
	}
	why := ""
	if f.OutageRefused != nil {
		why = " (" + f.OutageRefused.Error() + ")"
	}
	v.add(probOutageState, sevWarning, "%s on %s%s%s: a partition waiting out a downstream outage could not record it", admin.OutageUnknownText, which, strings.Join(parts, ", "), why).
		then("make Redis take writes again (free memory, or fix what refuses them); meanwhile check the service the handler calls", cli("info", f.Topic))
}

// lastMember names the member seen last, its host and PID, and whether it left or its
// heartbeats stopped, in the detail.
func (p *problemView) lastMember(m *admin.LastMember) *problemView {
	if m == nil {
		return p
	}
	how := "its heartbeats stopped"
	if m.Left {
		how = "it left"
	}
	p.Detail = "last member: " + m.String() + ", " + how
	return p
}

// outageProblem names the partitions waiting out a downstream outage: since the first
// outage's start, the soonest next probe, the first outage's reason.
func outageProblem(v *healthView, f groupFacts) {
	first, soonest, parts := f.Outages[0], f.Outages[0].NextProbe, make([]string, len(f.Outages))
	for i, o := range f.Outages {
		parts[i] = fmt.Sprint(o.Partition)
		if o.Since.Before(first.Since) {
			first = o
		}
		if o.NextProbe.Before(soonest) {
			soonest = o.NextProbe
		}
	}
	probe := "probing now"
	if next := soonest.Sub(f.Now); next > 0 {
		probe = "next probe in " + roundSpan(max(next, time.Second)) // under a second reads 1s, not 0s
	}
	which := "partitions "
	if len(parts) == 1 {
		which = "partition "
	}
	v.add(probOutage, sevWarning, "paused: downstream failing on %s%s, %s (%s)", which, strings.Join(parts, ", "), probe, first.Reason).
		since("since", first.Since, f.Now, "").
		then("fix the service the handler calls (the reason names it): each partition resumes by itself, in order, at its first probe that succeeds", cli("stats", f.Topic, f.Name))
}

// oldest is when the oldest message still to deliver was published: timeLag before now;
// zero when none waits.
func oldest(now time.Time, timeLag time.Duration) time.Time {
	if timeLag <= 0 || now.IsZero() {
		return time.Time{}
	}
	return now.Add(-timeLag)
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

// since completes f with when its lag began to grow, looked for in long (growthHistory).
func (f groupFacts) since(long recent) groupFacts {
	var lags []int64
	var times []time.Time
	for _, s := range long {
		if g, ok := s.Groups[f.Name]; ok {
			lags, times = append(lags, g.Lag), append(times, s.Time)
		}
	}
	if i, ok := growthStart(lags); ok {
		f.growthFrom, f.growthLag, f.growthEarlier = times[i], lags[i], i == 0
	}
	return f
}

// growthStart is the sample a rising lag began its rise at: the last one whose lag was
// within growth's threshold (10 messages and 10%) of the lowest; false without samples.
func growthStart(lags []int64) (int, bool) {
	if len(lags) == 0 {
		return 0, false
	}
	low := lags[0]
	for _, l := range lags {
		low = min(low, l)
	}
	at := 0
	for i, l := range lags {
		if l <= low+max(10, low/10) {
			at = i
		}
	}
	return at, true
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
// group that is gone; the first of them at first).
func topicHealth(topic string, names []string, groups []healthView, unattributed arrivals, now time.Time) healthView {
	v := okHealth()
	for i, g := range groups {
		name := names[i]
		for _, p := range g.Problems {
			q := v.add(p.Code, p.Severity, "group %s: %s", name, p.Text)
			q.Since, q.Next, q.Command, q.Group, q.Detail = p.Since, p.Next, p.Command, name, p.Detail
		}
	}
	if unattributed.count > 0 {
		v.add(probDeadLetters, sevWarning, "%s in the last %s", plural(int64(unattributed.count), "dead letter"), roundSpan(recentWindow)).
			since("arriving since", unattributed.first, now, "").
			then("read the reasons, fix the cause, then replay them", cli("dlq", "list", topic, "--failed-within", roundSpan(recentWindow)))
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
