package dashboard

import (
	"context"
	"sort"

	"github.com/streamq-dev/streamq/admin"
)

// topicState is what the Topics page and a topic's page judge a topic's health from, read
// once per request: the lag (admin.TopicLag), live members, dead letters, the recent history.
type topicState struct {
	lag      admin.TopicLag
	live     map[string]int // live members per group
	dlq      int64          // dead letters now
	arrived  map[string]int // dead letters per group within recentWindow
	seen     map[string]admin.GroupLiveness
	recent   recent
	memory   admin.TopicMemory // the Redis servers' memory, the topic's refused publishes
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
	if st.dlq, err = h.adm.DLQSize(ctx, topic); err != nil {
		return st, err
	}
	if st.arrived, err = h.arrivals(ctx, topic, st); err != nil {
		return st, err
	}
	if st.recent, err = h.recentHistory(ctx, topic); err != nil {
		return st, err
	}
	if st.memory, err = h.topicMemory(ctx, topic); err != nil {
		return st, err
	}
	st.judge()
	return st, nil
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

// arrivals counts, per group, the dead letters of topic that arrived within recentWindow
// (at most admin.MaxPageLimit of them are read).
func (h *Handler) arrivals(ctx context.Context, topic string, st topicState) (map[string]int, error) {
	out := map[string]int{}
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
		out[d.Group]++
	}
	return out, nil
}

// judge sets the groups' and the topic's health and the worst lag.
func (st *topicState) judge() {
	names := make([]string, 0, len(st.lag.Groups))
	healths := make([]healthView, 0, len(st.lag.Groups))
	attributed := 0
	for _, g := range st.lag.Groups {
		f := groupFacts{Name: g.Group, Members: st.live[g.Group], Lag: g.Lag, Pending: g.Pending, DeadLetters: st.arrived[g.Group],
			Expired: st.seen[g.Group].Expired}
		gs := groupState{lag: g, facts: f.with(st.recent)}
		gs.health = groupHealth(gs.facts)
		attributed += f.DeadLetters
		st.groups = append(st.groups, gs)
		names, healths = append(names, g.Group), append(healths, gs.health)
		if g.Lag > 0 && (st.worstLag == nil || g.Lag > st.worstLag.Lag) {
			st.worstLag = &worstLagView{Group: g.Group, Lag: g.Lag, LagExact: g.Exact, TimeLagMs: ms(g.TimeLag)}
		}
	}
	sort.Slice(st.groups, func(i, j int) bool { return st.groups[i].lag.Group < st.groups[j].lag.Group })
	total := 0
	for _, n := range st.arrived {
		total += n
	}
	st.health = topicHealth(names, healths, int64(total-attributed))
	memoryHealth(&st.health, st.memory, st.lag.Time)
}

// worstLagView is the group furthest behind on a topic.
type worstLagView struct {
	Group     string `json:"group"`
	Lag       int64  `json:"lag"`
	LagExact  bool   `json:"lagExact"`
	TimeLagMs int64  `json:"timeLagMs"` // age of its oldest undelivered message
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
		})
	}
	return out
}

// arrivedTotal is the dead letters that arrived within recentWindow.
func (st topicState) arrivedTotal() int64 {
	var n int64
	for _, c := range st.arrived {
		n += int64(c)
	}
	return n
}
