package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/admin"
)

// trendOf is a group's recent samples: lags and entries-read, one sample every 10 s.
func trendOf(lags, reads []int64) recent {
	var rc recent
	for i := range lags {
		rc = append(rc, admin.HistorySample{Time: time.Unix(int64(10*i), 0),
			Groups: map[string]admin.HistoryGroup{"g": {Lag: lags[i], EntriesRead: reads[i]}}})
	}
	return rc
}

// TestGroupHealth: each problem of the Topics page from the facts that make it.
func TestGroupHealth(t *testing.T) {
	steady := trendOf([]int64{5, 5, 5}, []int64{100, 200, 300})
	tests := []struct {
		name  string
		facts groupFacts
		rc    recent
		state string
		codes []string
	}{
		{"healthy", groupFacts{Members: 1, Lag: 5}, steady, sevOK, nil},
		{"no member with a backlog", groupFacts{Lag: 100}, steady, sevCritical, []string{probNoMember}},
		{"no member, nothing waiting", groupFacts{}, steady, sevWarning, []string{probNoMember}},
		{"nothing consumed while lag > 0", groupFacts{Members: 1, Lag: 7}, trendOf([]int64{7, 7, 7}, []int64{50, 50, 50}), sevCritical, []string{probNotConsuming}},
		{"lag growing", groupFacts{Members: 1, Lag: 400}, trendOf([]int64{100, 200, 400}, []int64{10, 20, 30}), sevWarning, []string{probLagGrowing}},
		{"lag grew, then fell", groupFacts{Members: 1, Lag: 150}, trendOf([]int64{100, 300, 150}, []int64{10, 20, 30}), sevOK, nil},
		{"small rise is noise", groupFacts{Members: 1, Lag: 8}, trendOf([]int64{2, 5, 8}, []int64{10, 20, 30}), sevOK, nil},
		{"too few samples for a trend", groupFacts{Members: 1, Lag: 400}, trendOf([]int64{0, 400}, []int64{0, 0}), sevOK, nil},
		{"dead letters arriving", groupFacts{Members: 1, Lag: 5, DeadLetters: 3}, steady, sevWarning, []string{probDeadLetters}},
		{"expired", groupFacts{Members: 1, Lag: 5, Expired: true}, steady, sevWarning, []string{probExpired}},
		{"stalled, no member, growing, dead letters", groupFacts{Lag: 400, DeadLetters: 1}, trendOf([]int64{100, 200, 400}, []int64{9, 9, 9}),
			sevCritical, []string{probNoMember, probLagGrowing, probDeadLetters}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.facts.Name = "g"
			v := groupHealth(tt.facts.with(tt.rc))
			assert.Equal(t, tt.state, v.State)
			var codes []string
			for _, p := range v.Problems {
				codes = append(codes, p.Code)
			}
			assert.Equal(t, tt.codes, codes)
		})
	}
}

// TestTopicHealth: the topic takes its groups' problems, named after them, and dead letters
// no group accounts for.
func TestTopicHealth(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	seen := now.Add(-12 * time.Minute)
	bad := okHealth()
	bad.add(probNoMember, sevCritical, "no live member").since("no member seen since", seen, now, "").then("start one", "streamq groups t")
	v := topicHealth("t", []string{"a", "b"}, []healthView{okHealth(), bad}, arrivals{count: 2, first: now.Add(-90 * time.Second)}, now)
	assert.Equal(t, sevCritical, v.State)
	assert.Equal(t, []problemView{
		{Code: probNoMember, Severity: sevCritical, Text: "group b: no live member; no member seen since 2026-12-01 19:48:00 UTC (12m ago)",
			Since: jsonTime(seen), Next: "start one", Command: "streamq groups t", Group: "b"},
		{Code: probDeadLetters, Severity: sevWarning, Text: "2 dead letters in the last 5m; arriving since 2026-12-01 19:58:30 UTC (1m30s ago)",
			Since: jsonTime(now.Add(-90 * time.Second)), Next: "read the reasons, fix the cause, then replay them",
			Command: "streamq dlq list t --failed-within 5m"},
	}, v.Problems)
	assert.Equal(t, sevOK, topicHealth("t", nil, nil, arrivals{}, now).State)
}

// TestProblemSinceAndNext: every problem a group can have says since when, where the facts
// tell it, and names its next step with the CLI command of it.
func TestProblemSinceAndNext(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	rc := trendOf([]int64{100, 200, 400}, []int64{9, 9, 9})
	for i := range rc {
		rc[i].Time = now.Add(time.Duration(i-2) * 2 * time.Minute)
	}
	f := groupFacts{Topic: "orders", Name: "audit", Now: now, Lag: 400, TimeLag: 30 * time.Minute, DeadLetters: 2,
		FirstDead: now.Add(-3 * time.Minute), Expired: true, ExpiredSince: now.Add(-time.Hour), LastSeen: now.Add(-2 * time.Hour)}
	f.Name = "g" // trendOf's group
	v := groupHealth(f.with(rc))
	want := []problemView{
		{Code: probNoMember, Severity: sevCritical, Since: jsonTime(now.Add(-2 * time.Hour)),
			Text:    "no live member: 400 messages waiting and nobody consumes them; no member seen since 2026-12-01 18:00:00 UTC (2h0m ago)",
			Next:    "start or restart a Subscriber of group g; see it live",
			Command: "streamq groups orders"},
		{Code: probLagGrowing, Severity: sevWarning, Since: jsonTime(now.Add(-4 * time.Minute)),
			Text:    "lag grew from 100 to 400; growing since at least 2026-12-01 19:56:00 UTC (4m ago)",
			Next:    "the group has no live member: start a Subscriber of group g (members added to none consume nothing until one runs)",
			Command: "streamq groups orders"},
		{Code: probExpired, Severity: sevWarning, Since: jsonTime(now.Add(-time.Hour)),
			Text:    "expired: no live member for the group expiry, retention no longer waits for it (what it loses is counted); expired since 2026-12-01 19:00:00 UTC (1h0m ago)",
			Next:    "start a member to make retention wait again (the losses are per partition), or delete the group if nobody needs it",
			Command: "streamq stats orders g"},
		{Code: probDeadLetters, Severity: sevWarning, Since: jsonTime(now.Add(-3 * time.Minute)),
			Text:    "2 dead letters in the last 5m; arriving since 2026-12-01 19:57:00 UTC (3m ago)",
			Next:    "read the reasons, fix the cause, then replay them",
			Command: "streamq dlq list orders --group g --failed-within 5m"},
	}
	assert.Equal(t, want, v.Problems)

	never := groupHealth(groupFacts{Topic: "orders", Name: "new", Now: now})
	assert.Equal(t, "no live member: new messages will wait; no member seen yet", never.Problems[0].Text)
	assert.True(t, time.Time(never.Problems[0].Since).IsZero())

	f = groupFacts{Topic: "orders", Name: "g", Now: now, Members: 1, Lag: 7, TimeLag: 10 * time.Minute}
	stalled := groupHealth(f.with(trendOf([]int64{7, 7, 7}, []int64{50, 50, 50})))
	assert.Equal(t, "nothing consumed in the last 20s while 7 messages wait; the oldest waits since 2026-12-01 19:50:00 UTC (10m ago)", stalled.Problems[0].Text)
	assert.Equal(t, "streamq pending orders g --sort deliveries", stalled.Problems[0].Command)
}

// TestGrowthSinceAndStep: "growing since" is when the rise began, found in the longer
// history (not the first sample of the window), and the next step fits the group: add members
// only to a group whose live members deliver; a group with none starts one, a group in an
// outage fixes its downstream, one whose outage state is unknown checks it first. A stale
// trend says as of when.
func TestGrowthSinceAndStep(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	long := trendOf([]int64{20, 25, 18, 21, 19, 60, 200, 900, 3219}, make([]int64, 9))
	for i := range long {
		long[i].Time = now.Add(time.Duration(i-8) * time.Minute)
	}
	recentOnly := long[6:] // the last 2 minutes: the window starts mid-rise
	base := groupFacts{Topic: "orders", Name: "g", Now: now, Members: 2, Lag: 3219}
	steps := []struct {
		name    string
		change  func(*groupFacts)
		next    string
		command string
	}{
		{"members deliver", func(*groupFacts) {}, "members consume slower than messages arrive: add members (up to one per partition) or find the slow partitions", "streamq lag orders g"},
		{"no live member", func(f *groupFacts) { f.Members = 0 }, "the group has no live member: start a Subscriber of group g (members added to none consume nothing until one runs)", "streamq groups orders"},
		{"outage", func(f *groupFacts) { f.Outages = []admin.Outage{{Partition: 0, Since: now, NextProbe: now}} },
			"partitions wait out a downstream outage: fix the service the handler calls; adding members would not deliver more", "streamq stats orders g"},
		{"outage state unknown", func(f *groupFacts) { f.OutageUnknown = []int{0} },
			"Redis refuses writes, so an outage cannot be recorded: find whether the handler's downstream is down before adding members", "streamq stats orders g"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			f := base
			st.change(&f)
			p := problemOf(t, groupHealth(f.with(recentOnly).since(long)), probLagGrowing)
			assert.Equal(t, "lag grew from 19 to 3219; growing since 2026-12-01 19:56:00 UTC (4m ago)", p.Text, "since the last sample before the rise")
			assert.Equal(t, jsonTime(now.Add(-4*time.Minute)), p.Since)
			assert.Equal(t, st.next, p.Next)
			assert.Equal(t, st.command, p.Command)
		})
	}
	f := base
	f.StaleSince = now.Add(-3 * time.Minute)
	p := problemOf(t, groupHealth(f.with(recentOnly).since(long)), probLagGrowing)
	assert.True(t, strings.HasSuffix(p.Text, "; stale: as of the last sample, 2026-12-01 19:57:00 UTC (3m ago)"), p.Text)
}

// TestGrowthStart: the last sample within 10 messages and 10 % of the lowest lag.
func TestGrowthStart(t *testing.T) {
	for _, tt := range []struct {
		lags []int64
		want int
		ok   bool
	}{
		{nil, 0, false},
		{[]int64{5, 50, 500}, 0, true},
		{[]int64{300, 20, 25, 18, 60, 600}, 3, true},
		{[]int64{1000, 1050, 2000, 5000}, 1, true},
	} {
		got, ok := growthStart(tt.lags)
		assert.Equal(t, tt.ok, ok, "%v", tt.lags)
		assert.Equal(t, tt.want, got, "%v", tt.lags)
	}
}

// TestNoMemberNamesTheLast: "no member seen since" names the last member, its process, and
// whether it left or its heartbeats stopped, on a line of its own (the problem stays one line).
func TestNoMemberNamesTheLast(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	seen := now.Add(-90 * time.Second)
	f := groupFacts{Topic: "orders", Name: "g", Now: now, Lag: 3, LastSeen: seen,
		LastMember: &admin.LastMember{Name: "worker-1", Host: "web-1", PID: 4121, At: seen}}
	p := problemOf(t, groupHealth(f), probNoMember)
	assert.Equal(t, "no live member: 3 messages waiting and nobody consumes them; no member seen since 2026-12-01 19:58:30 UTC (1m30s ago)", p.Text)
	assert.Equal(t, "last member: worker-1 (web-1 pid 4121), its heartbeats stopped", p.Detail)
	f.LastMember.Left = true
	assert.Equal(t, "last member: worker-1 (web-1 pid 4121), it left", problemOf(t, groupHealth(f), probNoMember).Detail)
	topic := topicHealth("orders", []string{"g"}, []healthView{groupHealth(f)}, arrivals{}, now)
	assert.Equal(t, "last member: worker-1 (web-1 pid 4121), it left", problemOf(t, topic, probNoMember).Detail, "the Topics page names it too")
}

// TestOutageUnknown: partitions whose outage state is unknown (Redis refuses the record's
// write) are a warning that says so, with Redis's answer and the next step.
func TestOutageUnknown(t *testing.T) {
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	f := groupFacts{Topic: "orders", Name: "g", Now: now, Members: 1, OutageUnknown: []int{0, 2},
		OutageRefused: fmt.Errorf("%w: %s", admin.ErrWritesRefused, "NOREPLICAS Not enough good replicas to write.")}
	v := groupHealth(f)
	assert.Equal(t, sevWarning, v.State)
	p := problemOf(t, v, probOutageState)
	assert.Equal(t, "outage state unknown: Redis refuses writes on partitions 0, 2 (writes refused by Redis: NOREPLICAS Not enough good replicas to write.): a partition waiting out a downstream outage could not record it", p.Text)
	assert.Equal(t, "streamq info orders", p.Command)
}

func problemOf(t *testing.T, v healthView, code string) problemView {
	t.Helper()
	for _, p := range v.Problems {
		if p.Code == code {
			return p
		}
	}
	t.Fatalf("no %s problem in %+v", code, v.Problems)
	return problemView{}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 42 * time.Second: "42s", 90 * time.Second: "1m30s", 12 * time.Minute: "12m",
		2*time.Hour + 5*time.Minute + 20*time.Second: "2h5m", 76 * time.Hour: "3d4h",
	} {
		assert.Equal(t, want, age(d), "%s", d)
	}
}

// TestCLIQuoting: names a shell would split or expand are quoted.
func TestCLIQuoting(t *testing.T) {
	assert.Equal(t, "streamq groups orders.eu-1", cli("groups", "orders.eu-1"))
	assert.Equal(t, `streamq stats 'my topic' 'it'"'"'s'`, cli("stats", "my topic", "it's"))
	assert.Equal(t, "streamq stats '$x' ''", cli("stats", "$x", ""))
}

// TestWorstFirstByTheOldestWaitingMessage: topics are read one after another, so their lag
// ages are measured at different instants. Of two critical topics, the one whose oldest
// waiting message was published first comes first, even when it was read earlier and its
// age therefore came out smaller.
func TestWorstFirstByTheOldestWaitingMessage(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	// "ledger" waits since t0 and is read at t0+1s; "orders" waits since t0+50ms and is
	// read at t0+1.2s: its age (1.15 s) is the larger.
	ledger := summaryOf(t, "ledger", t0.Add(time.Second), time.Second, 200)
	orders := summaryOf(t, "orders", t0.Add(1200*time.Millisecond), 1150*time.Millisecond, 6000)
	assert.Greater(t, orders.WorstLag.TimeLagMs, ledger.WorstLag.TimeLagMs)
	assert.True(t, worse(ledger, orders), "ledger's oldest waiting message is older")
	assert.False(t, worse(orders, ledger))

	same := summaryOf(t, "same", t0.Add(time.Second), time.Second, 6000)
	assert.True(t, worse(same, ledger), "as old: the larger lag first")
}

// summaryOf is a critical topic whose one group "g" has lag messages waiting, the oldest
// timeLag old when read at read.
func summaryOf(t *testing.T, topic string, read time.Time, timeLag time.Duration, lag int64) topicSummaryView {
	t.Helper()
	st := topicState{lag: admin.TopicLag{Topic: topic, Time: read, Groups: []admin.GroupLag{
		{Topic: topic, Group: "g", Time: read, Lag: lag, Exact: true, TimeLag: timeLag},
	}}}
	st.judge()
	st.health.State = sevCritical
	return topicSummaryView{Topic: topic, WorstLag: st.worstLag, Health: st.health}
}
