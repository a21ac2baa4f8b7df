package dashboard

import (
	"context"
	"sort"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// topicState is what the Topics page and a topic's page judge a topic's health from, read
// once per request: the lag (admin.TopicLag), live members, dead letters, the recent history.
type topicState struct {
	lag      admin.TopicLag
	live     map[string]int      // live members per group
	dlq      int64               // dead letters now
	arrived  map[string]arrivals // dead letters per group within recentWindow
	seen     map[string]admin.GroupLiveness
	outages  map[string]admin.GroupOutages // partitions waiting out a downstream outage, per group
	pauses   map[string]admin.PauseState   // groups an operator paused
	recent   recent
	fresh    freshnessView     // where recent's figures come from, how fresh
	growth   recent            // the longer history a growing lag's start is looked for in
	memory   admin.TopicMemory // the Redis servers' memory, the topic's refused publishes
	use      *admin.MemoryUse  // who holds the memory, at the high-water mark and above; nil below
	groups   []groupState      // sorted by name
	health   healthView
	worstLag *worstLagView
}

// groupState is one group of a topicState.
type groupState struct {
	lag    admin.GroupLag
	facts  groupFacts
	health healthView
}

// readTopicState reads topic's state.
func (h *Handler) readTopicState(ctx context.Context, topic string) (topicState, error) {
	var st topicState
	var err error
	if st.lag, err = h.adm.TopicLag(ctx, topic); err != nil {
		return st, err
	}
	if st.live, err = h.liveMembers(ctx, topic); err != nil {
		return st, err
	}
	if st.seen, err = h.adm.GroupLiveness(ctx, topic); err != nil {
		return st, err
	}
	if st.outages, err = h.adm.Outages(ctx, st.lag); err != nil {
		return st, err
	}
	if st.pauses, err = h.adm.GroupPauses(ctx, topic, groupNames(st.lag)); err != nil {
		return st, err
	}
	if st.dlq, err = h.adm.DLQSize(ctx, topic); err != nil {
		return st, err
	}
	if st.arrived, err = h.arrivals(ctx, topic, st); err != nil {
		return st, err
	}
	if st.recent, st.fresh, err = h.recentHistory(ctx, topic, st.lag.Time); err != nil {
		return st, err
	}
	if st.growth, err = h.growthHistory(ctx, st); err != nil {
		return st, err
	}
	if st.memory, err = h.topicMemory(ctx, topic); err != nil {
		return st, err
	}
	if st.use, err = h.uses.read(ctx, h.adm, st.memory); err != nil {
		return st, err
	}
	st.judge()
	return st, nil
}

// groupNames are the names of lag's groups.
func groupNames(lag admin.TopicLag) []string {
	out := make([]string, len(lag.Groups))
	for i, g := range lag.Groups {
		out[i] = g.Group
	}
	return out
}

// liveMembers counts the live members of every group of topic.
func (h *Handler) liveMembers(ctx context.Context, topic string) (map[string]int, error) {
	live, err := h.adm.LiveMembers(ctx, topic)
	out := map[string]int{}
	for _, g := range live {
		out[g.Group] = len(g.Members)
	}
	return out, err
}

// arrivals are dead letters that arrived within recentWindow: how many, and when the first
// of them failed.
type arrivals struct {
	count int
	first time.Time
}

func (a arrivals) add(failed time.Time) arrivals {
	if a.count == 0 || failed.Before(a.first) {
		a.first = failed
	}
	a.count++
	return a
}

// arrivals counts, per group, the dead letters of topic that arrived within recentWindow
// (at most admin.MaxPageLimit of them are read).
func (h *Handler) arrivals(ctx context.Context, topic string, st topicState) (map[string]arrivals, error) {
	out := map[string]arrivals{}
	if st.dlq == 0 {
		return out, nil
	}
	page, err := h.adm.FindDeadLetters(ctx, topic, admin.DLQQuery{
		Since: st.lag.Time.Add(-recentWindow), Limit: admin.MaxPageLimit, ScanLimit: admin.MaxPageLimit,
	})
	if err != nil {
		return nil, err
	}
	for _, d := range page.Letters {
		out[d.Group] = out[d.Group].add(d.FailedAt)
	}
	return out, nil
}

// judge sets the groups' and the topic's health and the worst lag.
func (st *topicState) judge() {
	names := make([]string, 0, len(st.lag.Groups))
	healths := make([]healthView, 0, len(st.lag.Groups))
	attributed := map[string]bool{}
	for _, g := range st.lag.Groups {
		gs := groupState{lag: g, facts: st.factsOf(g).with(st.recent).since(st.growth)}
		gs.health = groupHealth(gs.facts)
		attributed[g.Group] = true
		st.groups = append(st.groups, gs)
		names, healths = append(names, g.Group), append(healths, gs.health)
		if g.Lag > 0 && (st.worstLag == nil || g.Lag > st.worstLag.Lag) {
			st.worstLag = &worstLagView{Group: g.Group, Lag: g.Lag, LagExact: g.Exact, TimeLagMs: ms(g.TimeLag),
				oldestMs: st.lag.Time.Add(-g.TimeLag).UnixMilli()}
		}
	}
	sort.Slice(st.groups, func(i, j int) bool { return st.groups[i].lag.Group < st.groups[j].lag.Group })
	var unattributed arrivals
	for g, a := range st.arrived {
		if !attributed[g] {
			unattributed = unattributed.merge(a)
		}
	}
	st.health = topicHealth(st.lag.Topic, names, healths, unattributed, st.lag.Time)
	memoryHealth(&st.health, st.memory, st.use, st.lag.Time)
}

// factsOf is what st knows of group g now.
func (st *topicState) factsOf(g admin.GroupLag) groupFacts {
	seen, dead, out := st.seen[g.Group], st.arrived[g.Group], st.outages[g.Group]
	return groupFacts{
		Topic: st.lag.Topic, Name: g.Group, Now: st.lag.Time, Members: st.live[g.Group], Lag: g.Lag, Pending: g.Pending,
		TimeLag: g.TimeLag, DeadLetters: dead.count, FirstDead: dead.first,
		Expired: seen.Expired, ExpiredSince: seen.ExpiredSince, LastSeen: seen.LastSeen, LastMember: seen.LastMember,
		Outages: out.Outages, OutageUnknown: out.Unknown, OutageRefused: out.Refused,
		PausedSince: st.pauses[g.Group].Since, Paused: st.pauses[g.Group].Paused,
		StaleSince: st.fresh.staleSince(),
	}
}

func (a arrivals) merge(b arrivals) arrivals {
	if b.count == 0 {
		return a
	}
	if a.count == 0 || b.first.Before(a.first) {
		a.first = b.first
	}
	a.count += b.count
	return a
}

// healthOf is group's health; ok when st does not know the group (it came or went between
// two reads).
func (st topicState) healthOf(group string) healthView {
	for _, g := range st.groups {
		if g.lag.Group == group {
			return g.health
		}
	}
	return okHealth()
}

// groupPageHealth is group's health with the topic's problems that name it (the memory it
// holds back when it holds the most of any group).
func (st topicState) groupPageHealth(group string) healthView {
	v := st.healthOf(group)
	v.Problems = append([]problemView{}, v.Problems...)
	for _, p := range st.health.Problems {
		if p.Group == group && (p.Code == probRedisFull || p.Code == probMemoryHigh) {
			q := v.add(p.Code, p.Severity, "%s", p.Text)
			q.Since, q.Next, q.Command = p.Since, p.Next, p.Command
		}
	}
	return v
}

// worstLagView is the group furthest behind on a topic.
type worstLagView struct {
	Group     string `json:"group"`
	Lag       int64  `json:"lag"`
	LagExact  bool   `json:"lagExact"`
	TimeLagMs int64  `json:"timeLagMs"` // age of its oldest undelivered message
	// oldestMs is when that message was published (Unix ms): topics read one after another
	// are compared by it, since their ages are measured at different instants.
	oldestMs int64
}

// groupHealthView is one group as the Topics page shows it.
type groupHealthView struct {
	Name         string     `json:"name"`
	Members      int        `json:"members"` // live members
	Lag          int64      `json:"lag"`
	LagExact     bool       `json:"lagExact"`
	TimeLagMs    int64      `json:"timeLagMs"`
	Pending      int64      `json:"pending"`
	PendingAgeMs int64      `json:"pendingAgeMs"`
	ConsumeRate  *float64   `json:"consumeRate"`
	DeadLetters  int        `json:"deadLetters"` // within the recent window
	Expired      bool       `json:"expired"`     // retention no longer waits for it (group expiry)
	Health       healthView `json:"health"`
	Held         *heldView  `json:"held"` // what it holds back in memory, at the high-water mark and above
}

// groupViews are the groups of st for the API.
func (st topicState) groupViews() []groupHealthView {
	rates := st.recent.consumeRates()
	out := make([]groupHealthView, 0, len(st.groups))
	for _, g := range st.groups {
		out = append(out, groupHealthView{
			Name: g.lag.Group, Members: g.facts.Members, Lag: g.lag.Lag, LagExact: g.lag.Exact,
			TimeLagMs: ms(g.lag.TimeLag), Pending: g.lag.Pending, PendingAgeMs: ms(g.lag.PendingAge),
			ConsumeRate: rates[g.lag.Group], DeadLetters: g.facts.DeadLetters, Expired: g.facts.Expired, Health: g.health,
			Held: heldOf(st.use, st.lag.Topic, g.lag.Group),
		})
	}
	return out
}

// arrivedTotal is the dead letters that arrived within recentWindow.
func (st topicState) arrivedTotal() int64 {
	var n int64
	for _, a := range st.arrived {
		n += int64(a.count)
	}
	return n
}
