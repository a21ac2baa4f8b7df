package dashboard

import (
	"net/http"

	"github.com/streamq-dev/streamq/admin"
)

// dlqReasonsView is GET api/topics/{topic}/dlq/reasons: the dead letters counted by reason
// (admin.CountDeadLetters), largest first, under the list's filters.
type dlqReasonsView struct {
	Topic string `json:"topic"`
	By    string `json:"by"` // reason, group or partition
	// Letters is how many letters matched; Keys how many distinct keys they have; Others how
	// many letters are under the keys beyond Counts.
	Letters int64 `json:"letters"`
	Keys    int   `json:"keys"`
	Others  int64 `json:"others"`
	// Scanned is how many letters were read; Truncated that the read stopped before the end
	// (the counts are then those of the newest letters read).
	Scanned   int            `json:"scanned"`
	Truncated bool           `json:"truncated"`
	Counts    []dlqCountView `json:"counts"`
}

type dlqCountView struct {
	Key     string   `json:"key"` // the reason, the group ("" for none), or the partition number
	Letters int64    `json:"letters"`
	Oldest  jsonTime `json:"oldest"` // the oldest and the newest failure counted
	Newest  jsonTime `json:"newest"`
}

// dlqReasons counts the dead letters by reason: ?by= (reason, group, partition; default
// reason), top= (1 to 100, default 5), and the list's filters group=, reason= (part of),
// partition=, since=, until=.
func (h *Handler) dlqReasons(r *http.Request) (any, error) {
	q := r.URL.Query()
	a, err := readBrowseArgs(q, 1)
	if err != nil {
		return nil, err
	}
	cq := admin.DLQCountQuery{By: admin.DLQCountKey(q.Get("by")), Partitions: a.partitions, Group: q.Get("group"), Reason: q.Get("reason")}
	if cq.Top, err = queryInt(q, "top", 5, 1, 100); err != nil {
		return nil, err
	}
	if cq.Since, err = queryTime(q, "since"); err != nil {
		return nil, err
	}
	if cq.Until, err = queryTime(q, "until"); err != nil {
		return nil, err
	}
	c, err := h.adm.CountDeadLetters(r.Context(), r.PathValue("topic"), cq)
	if err != nil {
		return nil, err
	}
	v := dlqReasonsView{Topic: c.Topic, By: string(c.By), Letters: c.Letters, Keys: c.Keys, Others: c.Others,
		Scanned: c.Scanned, Truncated: c.Truncated, Counts: make([]dlqCountView, 0, len(c.Counts))}
	for _, n := range c.Counts {
		v.Counts = append(v.Counts, dlqCountView{Key: n.Key, Letters: n.Letters, Oldest: jsonTime(n.Oldest), Newest: jsonTime(n.Newest)})
	}
	return v, nil
}
