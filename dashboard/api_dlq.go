package dashboard

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/streamq-dev/streamq/admin"
)

// dlqTopicsView is GET api/dlq: the topics that have dead letters (admin.DLQTopics and
// admin.DLQSize), by name.
type dlqTopicsView struct {
	Topics []dlqTopicView `json:"topics"`
}

type dlqTopicView struct {
	Topic string `json:"topic"`
	Size  int64  `json:"size"`
}

func (h *Handler) dlqTopics(r *http.Request) (any, error) {
	topics, err := h.adm.ListTopics(r.Context())
	if err != nil {
		return nil, err
	}
	sort.Strings(topics)
	v := dlqTopicsView{Topics: []dlqTopicView{}}
	for _, t := range topics {
		n, err := h.adm.DLQSize(r.Context(), t)
		if errors.Is(err, admin.ErrTopicNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		if n > 0 {
			v.Topics = append(v.Topics, dlqTopicView{Topic: t, Size: n})
		}
	}
	return v, nil
}

// dlqView is GET api/topics/{topic}/dlq: a page of dead letters, newest first.
type dlqView struct {
	Topic   string           `json:"topic"`
	Size    int64            `json:"size"` // dead letters over all partitions, unfiltered
	Entries []deadLetterView `json:"entries"`
	pageView
}

// deadLetterView is admin.DeadLetter with a payload preview.
type deadLetterView struct {
	Partition         int               `json:"partition"` // the original partition (and its DLQ)
	ID                string            `json:"id"`        // the DLQ entry's id
	UUID              string            `json:"uuid"`
	Reason            string            `json:"reason"`
	Group             string            `json:"group"`
	RetryCount        int               `json:"retryCount"`
	MaxRetries        int               `json:"maxRetries"`
	OriginalMessageID string            `json:"originalMessageId"`
	OriginalStreamID  string            `json:"originalStreamId"`
	Timestamp         jsonTime          `json:"timestamp"`
	FailedAt          jsonTime          `json:"failedAt"`
	Metadata          map[string]string `json:"metadata"`
	Raw               string            `json:"raw"` // JSON fields of an undecodable entry
	Payload           payloadView       `json:"payload"`
	ReplayedAt        *jsonTime         `json:"replayedAt"` // the latest replay; null when never replayed
	ReplayedAs        string            `json:"replayedAs,omitempty"`
}

// deadLetterDetailView is GET api/topics/{topic}/dlq/{partition}/{id}: with the whole payload.
type deadLetterDetailView struct {
	deadLetterView
	Data         string `json:"data"`         // the whole payload
	DataEncoding string `json:"dataEncoding"` // "utf8" or "base64"
}

// dlqEntries pages through the dead letters newest first (admin.FindDeadLetters):
// ?group=, reason= (part of), partition=, since= and until= (RFC 3339 or @unix-ms), q=
// (search), after=, limit= (default 50).
func (h *Handler) dlqEntries(r *http.Request) (any, error) {
	topic, q := r.PathValue("topic"), r.URL.Query()
	a, err := readBrowseArgs(q, admin.DefaultPageLimit)
	if err != nil {
		return nil, err
	}
	dq := admin.DLQQuery{Partitions: a.partitions, After: a.after, Limit: a.limit,
		Group: q.Get("group"), Reason: q.Get("reason"), Search: q.Get("q")}
	if dq.Since, err = queryTime(q, "since"); err != nil {
		return nil, err
	}
	if dq.Until, err = queryTime(q, "until"); err != nil {
		return nil, err
	}
	size, err := h.adm.DLQSize(r.Context(), topic)
	if err != nil {
		return nil, err
	}
	page, err := h.adm.FindDeadLetters(r.Context(), topic, dq)
	if err != nil {
		return nil, err
	}
	v := dlqView{Topic: topic, Size: size, Entries: make([]deadLetterView, 0, len(page.Letters)),
		pageView: pageOf(a.limit, page.Next, page.Scanned, page.Truncated)}
	for _, d := range page.Letters {
		v.Entries = append(v.Entries, h.deadLetterOf(d))
	}
	return v, nil
}

func (h *Handler) dlqEntry(r *http.Request) (any, error) {
	p, err := partitionArg(r.PathValue("partition"))
	if err != nil {
		return nil, err
	}
	d, err := h.adm.DLQEntry(r.Context(), r.PathValue("topic"), p, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	data, enc := payloadData(d.Payload)
	return deadLetterDetailView{deadLetterView: h.deadLetterOf(d), Data: data, DataEncoding: enc}, nil
}

func (h *Handler) deadLetterOf(d admin.DeadLetter) deadLetterView {
	return deadLetterView{
		Partition: d.Partition, ID: d.ID, UUID: d.UUID, Reason: d.Reason, Group: d.Group,
		RetryCount: d.RetryCount, MaxRetries: d.MaxRetries, OriginalMessageID: d.OriginalMessageID,
		OriginalStreamID: d.OriginalStreamID, Timestamp: jsonTime(d.Timestamp), FailedAt: jsonTime(d.FailedAt),
		Metadata: nonNilMap(d.Metadata), Raw: d.Raw, Payload: previewPayload(d.Payload, h.opts.PreviewBytes),
		ReplayedAt: replayedAt(d.ReplayedAt), ReplayedAs: d.ReplayedAs,
	}
}

// replayedAt is a replay mark's time, nil for none.
func replayedAt(t time.Time) *jsonTime {
	if t.IsZero() {
		return nil
	}
	j := jsonTime(t)
	return &j
}

// partitionArg reads a partition number from the path.
func partitionArg(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 {
		return 0, badRequestf("partition must be a partition number, got %q", s)
	}
	return p, nil
}
