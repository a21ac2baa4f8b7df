package dashboard

import (
	"errors"
	"net/http"
	"sort"

	"github.com/streamq-dev/streamq/admin"
)

// topicsView is GET api/topics: every topic, worst health first.
type topicsView struct {
	Topics []topicSummaryView `json:"topics"`
}

// topicSummaryView is one topic of the topics list.
type topicSummaryView struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Length     int64  `json:"length"`    // published messages held (not retries), summed over partitions
	Retries    int64  `json:"retries"`   // retry entries held
	Groups     int    `json:"groups"`    // consumer groups
	DLQLength  int64  `json:"dlqLength"` // dead letters, summed over partitions
	// DLQRecent is how many dead letters arrived within the last 5 minutes.
	DLQRecent int64 `json:"dlqRecent"`
	// PublishRate is messages published per second between the two newest samples of the
	// topic's history; null until it has two.
	PublishRate *float64 `json:"publishRate"`
	// WorstLag is the group furthest behind, null when none lags.
	WorstLag       *worstLagView     `json:"worstLag"`
	ConsumerGroups []groupHealthView `json:"consumerGroups"`
	Health         healthView        `json:"health"`
	Memory         memoryView        `json:"memory"` // the Redis servers', the topic's refused publishes
	// Freshness says how fresh PublishRate and the groups' rates and lag trends are.
	Freshness freshnessView `json:"freshness"`
}

func (h *Handler) topics(r *http.Request) (any, error) {
	ctx := r.Context()
	names, err := h.adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	v := topicsView{Topics: []topicSummaryView{}}
	for _, t := range names {
		st, err := h.readTopicState(ctx, t)
		if errors.Is(err, admin.ErrTopicNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		v.Topics = append(v.Topics, topicSummaryView{
			Topic: t, Partitions: st.lag.Partitions, Length: st.lag.Length, Retries: st.lag.Retries,
			Groups: len(st.lag.Groups), DLQLength: st.dlq, DLQRecent: st.arrivedTotal(),
			PublishRate: st.recent.publishRate(), WorstLag: st.worstLag, ConsumerGroups: st.groupViews(), Health: st.health,
			Memory: memoryOf(st.memory), Freshness: st.fresh,
		})
	}
	sort.SliceStable(v.Topics, func(i, j int) bool { return worse(v.Topics[i], v.Topics[j]) })
	return v, nil
}

// worse orders topics worst first: by health, then by the worst lag's age (the older its
// oldest waiting message, the worse) and size, then by name.
func worse(a, b topicSummaryView) bool {
	if ra, rb := rank(a.Health.State), rank(b.Health.State); ra != rb {
		return ra > rb
	}
	la, lb := a.WorstLag, b.WorstLag
	switch {
	case la != nil && lb == nil:
		return true
	case la == nil && lb != nil:
		return false
	case la != nil && la.oldestMs != lb.oldestMs:
		return la.oldestMs < lb.oldestMs
	case la != nil && la.Lag != lb.Lag:
		return la.Lag > lb.Lag
	}
	return a.Topic < b.Topic
}

// topicView is GET api/topics/{topic}: admin.QueueInfo (with the topic's length retention
// and, per partition, the entries over max length and the group holding them), the groups,
// and per partition the lease owner and lag of every group.
type topicView struct {
	Topic        string             `json:"topic"`
	Partitions   int                `json:"partitions"`
	Length       int64              `json:"length"`
	FirstID      string             `json:"firstId"`
	LastID       string             `json:"lastId"`
	DLQLength    int64              `json:"dlqLength"`
	DLQRecent    int64              `json:"dlqRecent"`
	Retries      int64              `json:"retries"`
	PublishRate  *float64           `json:"publishRate"`
	Health       healthView         `json:"health"`
	WorstLag     *worstLagView      `json:"worstLag"`
	Retention    retentionView      `json:"retention"`
	OverMaxLen   int64              `json:"overMaxLen"` // summed over partitions
	Memory       memoryView         `json:"memory"`     // the Redis servers', the topic's refused publishes
	Freshness    freshnessView      `json:"freshness"`  // how fresh PublishRate and the health's trends are
	Groups       []groupSummaryView `json:"groups"`
	PerPartition []partitionView    `json:"perPartition"`
}

// retentionView is admin.LengthRetention: the topic's length retention.
type retentionView struct {
	MaxLen   int64  `json:"maxLen"` // entries per partition; -1: off
	Exact    bool   `json:"exact"`
	Policy   string `json:"policy"`   // "acked" or "hard"
	Recorded bool   `json:"recorded"` // false: no publisher recorded one, the defaults apply
}

// partitionView is one partition of a topic.
type partitionView struct {
	Partition int    `json:"partition"`
	Length    int64  `json:"length"`
	FirstID   string `json:"firstId"`
	LastID    string `json:"lastId"`
	DLQLength int64  `json:"dlqLength"`
	// OverMaxLen is the entries beyond the topic's max length; Holder the group whose
	// position stops the trim ("" when none holds them) and HolderNeeds the lowest id it needs.
	OverMaxLen  int64                `json:"overMaxLen"`
	Holder      string               `json:"holder"`
	HolderNeeds string               `json:"holderNeeds"`
	Groups      []partitionGroupView `json:"groups"` // in the order of topicView.Groups
}

// partitionGroupView is one group on one partition.
type partitionGroupView struct {
	Group           string `json:"group"`
	Exists          bool   `json:"exists"` // the group is registered on this partition
	Owner           string `json:"owner"`  // the member holding the lease, "" when free
	LeaseTTLMs      int64  `json:"leaseTtlMs"`
	Pending         int64  `json:"pending"`
	Lag             int64  `json:"lag"`
	LagExact        bool   `json:"lagExact"`
	LastDeliveredID string `json:"lastDeliveredId"`
}

func (h *Handler) topic(r *http.Request) (any, error) {
	ctx, topic := r.Context(), r.PathValue("topic")
	q, err := h.adm.QueueInfo(ctx, topic)
	if err != nil {
		return nil, err
	}
	st, err := h.readTopicState(ctx, topic)
	if err != nil {
		return nil, err
	}
	groups, err := h.groupSummaries(r, topic, st)
	if err != nil {
		return nil, err
	}
	stats, err := h.allGroupStats(r, topic, groups)
	if err != nil {
		return nil, err
	}
	v := topicView{
		Topic: topic, Partitions: q.Partitions, Length: q.Length, FirstID: q.FirstID, LastID: q.LastID,
		DLQLength: q.DLQLength, DLQRecent: st.arrivedTotal(), Retries: st.lag.Retries, Health: st.health,
		WorstLag: st.worstLag, PublishRate: st.recent.publishRate(), Groups: groups,
		Retention: retentionOf(q.Retention), OverMaxLen: q.OverMaxLen, Memory: memoryOf(st.memory), Freshness: st.fresh,
		PerPartition: make([]partitionView, 0, len(q.PerPartition)),
	}
	for _, pi := range q.PerPartition {
		v.PerPartition = append(v.PerPartition, partitionOf(pi, groups, stats))
	}
	return v, nil
}

// allGroupStats reads admin.GroupStats of every group, indexed [group][partition].
func (h *Handler) allGroupStats(r *http.Request, topic string, groups []groupSummaryView) ([]map[int]admin.PartitionGroupStats, error) {
	out := make([]map[int]admin.PartitionGroupStats, len(groups))
	for i, g := range groups {
		out[i] = map[int]admin.PartitionGroupStats{}
		st, err := h.adm.GroupStats(r.Context(), topic, g.Name)
		if errors.Is(err, admin.ErrGroupNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		for _, p := range st.Partitions {
			out[i][p.Partition] = p
		}
	}
	return out, nil
}

func retentionOf(r admin.LengthRetention) retentionView {
	return retentionView{MaxLen: r.MaxLen, Exact: r.Exact, Policy: r.Policy, Recorded: r.Recorded}
}

func partitionOf(pi admin.PartitionInfo, groups []groupSummaryView, stats []map[int]admin.PartitionGroupStats) partitionView {
	pv := partitionView{
		Partition: pi.Partition, Length: pi.Length, FirstID: pi.FirstID, LastID: pi.LastID,
		DLQLength: pi.DLQLength, OverMaxLen: pi.OverMaxLen, Holder: pi.Holder, HolderNeeds: pi.HolderNeeds,
		Groups: make([]partitionGroupView, 0, len(groups)),
	}
	for i, g := range groups {
		st, ok := stats[i][pi.Partition]
		pv.Groups = append(pv.Groups, partitionGroupView{
			Group: g.Name, Exists: ok, Owner: st.LeaseOwner, LeaseTTLMs: ms(st.LeaseTTL),
			Pending: st.Pending, Lag: st.Lag, LagExact: st.LagExact, LastDeliveredID: st.LastDeliveredID,
		})
	}
	return pv
}

// entriesView is GET api/topics/{topic}/messages.
type entriesView struct {
	Topic   string      `json:"topic"`
	Entries []entryView `json:"entries"`
}

// entryView is one stream entry (admin.Entry) with a payload preview.
type entryView struct {
	Partition int               `json:"partition"`
	ID        string            `json:"id"`
	Time      jsonTime          `json:"time"`
	UUID      string            `json:"uuid"`
	Metadata  map[string]string `json:"metadata"`
	Payload   payloadView       `json:"payload"`
	Fields    map[string]string `json:"fields"`    // fields beyond the default format's
	Malformed string            `json:"malformed"` // decode error, "" when fine
}

// maxListLimit bounds the limit query parameter of the list endpoints.
const maxListLimit = 1000

// messages lists the newest entries across partitions (?limit=N, default 20), or one
// partition's entries between two ids (?partition=P&start=ID&end=ID&reverse=1), or, with
// the message browser's parameters, a filtered page (browse).
func (h *Handler) messages(r *http.Request) (any, error) {
	q, topic := r.URL.Query(), r.PathValue("topic")
	if browsing(q) {
		return h.browse(r, topic)
	}
	limit, err := queryInt(q, "limit", 20, 1, maxListLimit)
	if err != nil {
		return nil, err
	}
	var entries []admin.Entry
	if q.Get("partition") == "" {
		entries, err = h.adm.ListRecent(r.Context(), topic, limit)
	} else {
		var p int
		if p, err = queryInt(q, "partition", 0, 0, 1<<20); err != nil {
			return nil, err
		}
		read := h.adm.Range
		if q.Get("reverse") == "1" || q.Get("reverse") == "true" {
			read = h.adm.RevRange
		}
		entries, err = read(r.Context(), topic, p, q.Get("start"), q.Get("end"), int64(limit))
	}
	if err != nil {
		return nil, err
	}
	v := entriesView{Topic: topic, Entries: make([]entryView, 0, len(entries))}
	for _, e := range entries {
		v.Entries = append(v.Entries, h.entryOf(e))
	}
	return v, nil
}

func (h *Handler) entryOf(e admin.Entry) entryView {
	p := previewPayload(e.Payload, h.opts.PreviewBytes)
	if e.Offloaded {
		p = payloadView{Size: e.PayloadSize, Encoding: encText, Offloaded: true}
	}
	return entryView{
		Partition: e.Partition, ID: e.ID, Time: jsonTime(e.Time), UUID: e.UUID,
		Metadata: nonNilMap(e.Metadata), Payload: p, Fields: nonNilMap(e.Fields), Malformed: e.Malformed,
	}
}
