package dashboard

import (
	"net/http"
	"sort"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/admin"
)

// groupsView is GET api/topics/{topic}/groups.
type groupsView struct {
	Topic  string             `json:"topic"`
	Groups []groupSummaryView `json:"groups"`
}

// groupSummaryView is one consumer group of a topic (admin.GroupInfo) with its consume rate.
type groupSummaryView struct {
	Name       string `json:"name"`
	Consumers  int    `json:"consumers"`
	Pending    int64  `json:"pending"`
	Lag        int64  `json:"lag"`
	LagUnknown bool   `json:"lagUnknown"` // Lag is a lower bound
	// ConsumeRate is entries delivered per second between the two newest samples of the
	// topic's history; null until it has two.
	ConsumeRate *float64 `json:"consumeRate"`
	// TimeLagMs is the age of the oldest message the group has still to deliver
	// (admin.GroupLag), PendingAgeMs that of its oldest pending one.
	TimeLagMs    int64 `json:"timeLagMs"`
	PendingAgeMs int64 `json:"pendingAgeMs"`
	// Expired: retention no longer waits for the group on some partition (no live member
	// for the group expiry); LastSeen is when a member was last seen (its last heartbeat).
	Expired  bool       `json:"expired"`
	LastSeen string     `json:"lastSeen,omitempty"`
	Health   healthView `json:"health"`
	// Held is what the group holds back in Redis's memory, while some server is at or above
	// the high-water mark (admin.MemoryUse); null otherwise.
	Held *heldView `json:"held"`
}

func (h *Handler) groups(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	st, err := h.readTopicState(r.Context(), topic)
	if err != nil {
		return nil, err
	}
	gs, err := h.groupSummaries(r, topic, st)
	if err != nil {
		return nil, err
	}
	return groupsView{Topic: topic, Groups: gs}, nil
}

// groupSummaries lists topic's groups (admin.ConsumerGroups) with their time lag and health
// from st.
func (h *Handler) groupSummaries(r *http.Request, topic string, st topicState) ([]groupSummaryView, error) {
	infos, err := h.adm.ConsumerGroups(r.Context(), topic)
	if err != nil {
		return nil, err
	}
	rates := st.recent.consumeRates()
	out := make([]groupSummaryView, 0, len(infos))
	for _, g := range infos {
		v := groupSummaryView{
			Name: g.Name, Consumers: g.Consumers, Pending: g.Pending, Lag: g.Lag,
			LagUnknown: g.LagUnknown, ConsumeRate: rates[g.Name], Health: okHealth(),
			Expired: g.Expired, LastSeen: rfc3339(g.LastSeen), Held: heldOf(st.use, topic, g.Name),
		}
		for _, gs := range st.groups {
			if gs.lag.Group == g.Name {
				v.Lag, v.LagUnknown, v.Pending = gs.lag.Lag, !gs.lag.Exact, gs.lag.Pending
				v.TimeLagMs, v.PendingAgeMs, v.Health = ms(gs.lag.TimeLag), ms(gs.lag.PendingAge), gs.health
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// groupView is GET api/topics/{topic}/groups/{group}: admin.GroupStats with the members and
// the partitions each holds, and the group's health as the Topics page judges it.
type groupView struct {
	Topic     string       `json:"topic"`
	Group     string       `json:"group"`
	Health    healthView   `json:"health"` // the group's, as in api/topics' consumerGroups
	Time      jsonTime     `json:"time"`   // the Redis server's clock when read
	Members   []memberView `json:"members"`
	Pending   int64        `json:"pending"`
	Lag       int64        `json:"lag"`
	TimeLagMs int64        `json:"timeLagMs"`
	// PendingAgeMs is the age of the oldest pending entry.
	PendingAgeMs int64    `json:"pendingAgeMs"`
	Unowned      []int    `json:"unowned"` // partitions whose lease nobody holds
	Paused       bool     `json:"paused"`  // an operator paused the group (admin.PauseGroup)
	PausedAt     string   `json:"pausedAt,omitempty"`
	Expired      bool     `json:"expired"` // retention no longer waits for it on some partition
	ExpiredSince jsonTime `json:"expiredSince"`
	// LastSeen is when a member was last seen (admin.GroupLiveness: its last heartbeat or
	// leave, or a partition's record of it); null when never recorded. LastMember is the
	// member seen last, null when none is recorded.
	LastSeen   jsonTime        `json:"lastSeen"`
	LastMember *lastMemberView `json:"lastMember"`
	// OutagesUnknown are the partitions whose outage state is unknown (no record, and Redis
	// refuses its write), OutageUnknown what to say of them ("" when none).
	OutagesUnknown []int  `json:"outagesUnknown"`
	OutageUnknown  string `json:"outageUnknown"`
	// Held is what the group holds back in Redis's memory while some server is at or above
	// the high-water mark; null otherwise.
	Held *heldView `json:"held"`
	// Freshness says how fresh the history behind the health is.
	Freshness  freshnessView        `json:"freshness"`
	Partitions []groupPartitionView `json:"partitions"`
}

// lastMemberView is admin.LastMember.
type lastMemberView struct {
	Name string   `json:"name"`
	Host string   `json:"host"`
	PID  int      `json:"pid"`
	At   jsonTime `json:"at"`   // its last heartbeat, or when it left
	Left bool     `json:"left"` // it left (rather than stopped heartbeating)
	Text string   `json:"text"` // "worker-1 (web-1 pid 4121)"
}

func lastMemberOf(m *admin.LastMember) *lastMemberView {
	if m == nil {
		return nil
	}
	return &lastMemberView{Name: m.Name, Host: m.Host, PID: m.PID, At: jsonTime(m.At), Left: m.Left, Text: m.String()}
}

// memberView is a member of the group's membership (live, or stopped without leaving) or a
// lease holder.
type memberView struct {
	Name       string `json:"name"`
	Live       bool   `json:"live"`       // its heartbeat has not expired
	Partitions []int  `json:"partitions"` // partitions whose lease it holds
	// HeartbeatExpires is when its latest heartbeat expires (in the past: it stopped without
	// leaving), sent one heartbeat TTL before, at HeartbeatSent; null for a lease holder no
	// longer in the membership.
	HeartbeatExpires jsonTime `json:"heartbeatExpires"`
	HeartbeatSent    jsonTime `json:"heartbeatSent"`
	// Host and PID are its process ("" and 0 when its streamq version did not record them).
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

// groupPartitionView is admin.PartitionGroupStats.
type groupPartitionView struct {
	Partition       int    `json:"partition"`
	Pending         int64  `json:"pending"`
	Lag             int64  `json:"lag"`
	LagExact        bool   `json:"lagExact"`
	LastDeliveredID string `json:"lastDeliveredId"`
	EntriesRead     int64  `json:"entriesRead"`
	RedisConsumers  int    `json:"redisConsumers"` // live or not; the group's members are live
	LeaseOwner      string `json:"leaseOwner"`
	LeaseTTLMs      int64  `json:"leaseTtlMs"`
	TimeLagMs       int64  `json:"timeLagMs"`
	CommitFrontier  string `json:"commitFrontier"`
	// LastSeen is when a member last held the partition; ExpiredSince, when set, since when
	// retention no longer waits for the group there.
	LastSeen     string `json:"lastSeen,omitempty"`
	ExpiredSince string `json:"expiredSince,omitempty"`
	// Outage is the downstream outage its lease holder waits out (admin.Outage), absent
	// when none: the partition hands out nothing until a probe succeeds.
	Outage *outageView `json:"outage,omitempty"`
	// OutageUnknown says why the outage state is unknown there ("" when known): no record,
	// and Redis refuses its write.
	OutageUnknown string `json:"outageUnknown,omitempty"`
}

// outageView is admin.Outage.
type outageView struct {
	Member    string   `json:"member"`
	Since     jsonTime `json:"since"`
	NextProbe jsonTime `json:"nextProbe"`
	Probes    int      `json:"probesFailed"`
	Reason    string   `json:"reason"`
}

func outageViewOf(o *admin.Outage) *outageView {
	if o == nil {
		return nil
	}
	return &outageView{Member: o.Member, Since: jsonTime(o.Since), NextProbe: jsonTime(o.NextProbe), Probes: o.Probes, Reason: o.Reason}
}

func (h *Handler) group(r *http.Request) (any, error) {
	ctx, topic, group := r.Context(), r.PathValue("topic"), r.PathValue("group")
	h.sampler.view(ctx, topic)
	st, err := h.adm.GroupStats(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	ts, err := h.readTopicState(ctx, topic)
	if err != nil {
		return nil, err
	}
	seen := ts.seen[group]
	v := groupView{
		Topic: st.Topic, Group: st.Group, Health: ts.groupPageHealth(group), Time: jsonTime(st.Time),
		Pending: st.Pending, Lag: st.Lag, TimeLagMs: ms(st.TimeLag), PendingAgeMs: ms(st.PendingAge),
		Members: membersOf(st), Unowned: []int{}, Partitions: make([]groupPartitionView, 0, len(st.Partitions)),
		Paused: st.Pause.Paused, PausedAt: rfc3339(st.Pause.Since), Expired: st.Expired,
		ExpiredSince: jsonTime(seen.ExpiredSince), LastSeen: jsonTime(seen.LastSeen), LastMember: lastMemberOf(lastOf(st, seen)),
		OutagesUnknown: []int{}, Held: heldOf(ts.use, topic, group), Freshness: ts.fresh,
	}
	for _, p := range st.Partitions {
		v.add(p)
	}
	return v, nil
}

// lastOf is the member seen last: GroupStats' (read with the members), else the liveness's.
func lastOf(st admin.GroupStats, seen admin.GroupLiveness) *admin.LastMember {
	if st.LastMember != nil {
		return st.LastMember
	}
	return seen.LastMember
}

// add adds partition p to the view.
func (v *groupView) add(p admin.PartitionGroupStats) {
	if p.LeaseOwner == "" {
		v.Unowned = append(v.Unowned, p.Partition)
	}
	pv := groupPartitionView{
		Partition: p.Partition, Pending: p.Pending, Lag: p.Lag, LagExact: p.LagExact,
		LastDeliveredID: p.LastDeliveredID, EntriesRead: p.EntriesRead, RedisConsumers: p.Consumers,
		LeaseOwner: p.LeaseOwner, LeaseTTLMs: ms(p.LeaseTTL), TimeLagMs: ms(p.TimeLag),
		CommitFrontier: p.CommitFrontier, LastSeen: rfc3339(p.LastSeen), ExpiredSince: rfc3339(p.ExpiredSince),
		Outage: outageViewOf(p.Outage),
	}
	if p.OutageUnknown != nil {
		pv.OutageUnknown = admin.OutageUnknownText
		v.OutagesUnknown = append(v.OutagesUnknown, p.Partition)
		v.OutageUnknown = admin.OutageUnknownText + " (" + p.OutageUnknown.Error() + ")"
	}
	v.Partitions = append(v.Partitions, pv)
}

// membersOf lists the members of the membership, live or not, and the lease holders (a
// holder whose heartbeat expired is not live), each with the partitions it holds and its
// heartbeat's expiry, sorted by name.
func membersOf(st admin.GroupStats) []memberView {
	byName := map[string]*memberView{}
	get := func(name string) *memberView {
		if m, ok := byName[name]; ok {
			return m
		}
		m := &memberView{Name: name, Partitions: []int{}}
		byName[name] = m
		return m
	}
	for _, hb := range st.Heartbeats {
		m := get(hb.Name)
		m.Live, m.HeartbeatExpires, m.HeartbeatSent = hb.Live, jsonTime(hb.Expires), jsonTime(hb.Sent)
		m.Host, m.PID = hb.Host, hb.PID
	}
	for _, name := range st.Members {
		get(name).Live = true
	}
	for _, p := range st.Partitions {
		if p.LeaseOwner != "" {
			m := get(p.LeaseOwner)
			m.Partitions = append(m.Partitions, p.Partition)
		}
	}
	out := make([]memberView, 0, len(byName))
	for _, m := range byName {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// pendingView is GET api/topics/{topic}/groups/{group}/pending.
type pendingView struct {
	Topic   string             `json:"topic"`
	Group   string             `json:"group"`
	Entries []pendingEntryView `json:"entries"`
}

// pendingEntryView is admin.PendingEntry.
type pendingEntryView struct {
	Partition  int    `json:"partition"`
	ID         string `json:"id"`
	Consumer   string `json:"consumer"`
	IdleMs     int64  `json:"idleMs"`
	Deliveries int64  `json:"deliveries"`
}

var pendingSorts = map[string]admin.PendingSort{
	"": admin.SortByIdle, "idle": admin.SortByIdle, "deliveries": admin.SortByDeliveries, "id": admin.SortByID,
}

// pending samples the group's pending entries: ?limit=N (default 100), ?sort=idle|deliveries|id,
// ?minIdleMs=N.
func (h *Handler) pending(r *http.Request) (any, error) {
	q := r.URL.Query()
	limit, err := queryInt(q, "limit", admin.DefaultPendingLimit, 1, maxListLimit)
	if err != nil {
		return nil, err
	}
	minIdle, err := queryInt(q, "minIdleMs", 0, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	sortBy, ok := pendingSorts[q.Get("sort")]
	if !ok {
		return nil, badRequestf("sort must be idle, deliveries or id, got %q", q.Get("sort"))
	}
	topic, group := r.PathValue("topic"), r.PathValue("group")
	entries, err := h.adm.Pending(r.Context(), topic, group, admin.PendingOptions{
		Limit: limit, Sort: sortBy, MinIdle: time.Duration(minIdle) * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	v := pendingView{Topic: topic, Group: group, Entries: make([]pendingEntryView, 0, len(entries))}
	for _, e := range entries {
		v.Entries = append(v.Entries, pendingEntryView{
			Partition: e.Partition, ID: e.ID, Consumer: e.Consumer, IdleMs: ms(e.Idle), Deliveries: e.Deliveries,
		})
	}
	return v, nil
}

// resetRequest is the body of POST .../reset-offset: "beginning", "latest", a stream id, an
// RFC 3339 time or "@unix-ms" (admin.ParseOffset).
type resetRequest struct {
	To string `json:"to"`
}

// resetView is admin.ResetResult.
type resetView struct {
	Partitions  int    `json:"partitions"`
	PendingKept bool   `json:"pendingKept"`
	Note        string `json:"note"`
}

func (h *Handler) resetOffset(r *http.Request) (any, watermill.LogFields, error) {
	topic, group := r.PathValue("topic"), r.PathValue("group")
	fields := watermill.LogFields{"topic": topic, "group": group}
	var req resetRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, fields, err
	}
	fields["to"] = req.To
	to, err := admin.ParseOffset(req.To)
	if err != nil {
		return nil, fields, err
	}
	res, err := h.adm.ResetGroupOffset(r.Context(), topic, group, to)
	if err != nil {
		return nil, fields, err
	}
	return resetView{Partitions: res.Partitions, PendingKept: res.PendingKept, Note: res.Note}, fields, nil
}

// pauseView is POST .../pause and .../resume: the group's pause after the request.
type pauseView struct {
	Paused   bool   `json:"paused"`
	PausedAt string `json:"pausedAt,omitempty"`
	Changed  bool   `json:"changed"` // false: it already was in that state
}

// pauseGroup pauses the group for every member (admin.PauseGroup).
func (h *Handler) pauseGroup(r *http.Request) (any, watermill.LogFields, error) {
	topic, group := r.PathValue("topic"), r.PathValue("group")
	fields := watermill.LogFields{"topic": topic, "group": group}
	before, err := h.adm.GroupPause(r.Context(), topic, group)
	if err != nil {
		return nil, fields, err
	}
	p, err := h.adm.PauseGroup(r.Context(), topic, group)
	if err != nil {
		return nil, fields, err
	}
	return pauseView{Paused: true, PausedAt: rfc3339(p.Since), Changed: !before.Paused}, fields, nil
}

// resumeGroup ends a group's pause (admin.ResumeGroup).
func (h *Handler) resumeGroup(r *http.Request) (any, watermill.LogFields, error) {
	topic, group := r.PathValue("topic"), r.PathValue("group")
	fields := watermill.LogFields{"topic": topic, "group": group}
	was, err := h.adm.ResumeGroup(r.Context(), topic, group)
	if err != nil {
		return nil, fields, err
	}
	return pauseView{Changed: was}, fields, nil
}
