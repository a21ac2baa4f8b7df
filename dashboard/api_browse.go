package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// pageView is the paging part of a paged answer.
type pageView struct {
	Limit int `json:"limit"`
	// Next is the cursor of the next page ("P/ID", for ?after=), "" when nothing is left.
	Next string `json:"next"`
	// Scanned is how many entries the server read for this page; Truncated is true when it
	// stopped at its scan bound before the page was full (Next goes on from there).
	Scanned   int  `json:"scanned"`
	Truncated bool `json:"truncated"`
}

func pageOf(limit int, next *admin.Cursor, scanned int, truncated bool) pageView {
	v := pageView{Limit: limit, Scanned: scanned, Truncated: truncated}
	if next != nil {
		v.Next = next.String()
	}
	return v
}

// browseArgs are the query parameters every paged endpoint takes: limit, after, partition
// (repeatable or comma-separated).
type browseArgs struct {
	limit      int
	after      *admin.Cursor
	partitions []int
}

func readBrowseArgs(q url.Values, defLimit int) (browseArgs, error) {
	var a browseArgs
	var err error
	if a.limit, err = queryInt(q, "limit", defLimit, 1, admin.MaxPageLimit); err != nil {
		return a, err
	}
	if s := q.Get("after"); s != "" {
		c, err := admin.ParseCursor(s)
		if err != nil {
			return a, err
		}
		a.after = &c
	}
	for _, v := range q["partition"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			p, err := partitionArg(f)
			if err != nil {
				return a, err
			}
			a.partitions = append(a.partitions, p)
		}
	}
	return a, nil
}

// queryTime reads a time parameter: RFC 3339 or @unix-ms; zero when absent.
func queryTime(q url.Values, name string) (time.Time, error) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		return time.Time{}, nil
	}
	if ms, ok := strings.CutPrefix(s, "@"); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n >= 0 {
			return time.UnixMilli(n), nil
		}
	} else if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, badRequestf("query parameter %s must be an RFC 3339 time or @unix-milliseconds, got %q", name, s)
}

// queryBound reads an id-range bound: a stream id ("1700000000000-0", "1700000000000"), an
// RFC 3339 time or @unix-ms (standing for the ids of that millisecond); "" when absent.
func queryBound(q url.Values, name string) (string, error) {
	s := strings.TrimSpace(q.Get(name))
	if s == "" {
		return "", nil
	}
	if _, _, ok := streamid.Parse(s); ok {
		return s, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strconv.FormatUint(n, 10), nil
	}
	t, err := queryTime(q, name)
	if err != nil {
		return "", badRequestf("query parameter %s must be a stream id, an RFC 3339 time or @unix-milliseconds, got %q", name, s)
	}
	return strconv.FormatInt(max(t.UnixMilli(), 0), 10), nil
}

// browseView is GET api/topics/{topic}/messages with a filter.
type browseView struct {
	Topic   string      `json:"topic"`
	Entries []entryView `json:"entries"`
	pageView
}

// browse pages through the topic's entries newest first (admin.FindEntries): ?partition=,
// from= and to= (ids or times), key=, uuid=, q= (search), after=, limit= (default 50).
func (h *Handler) browse(r *http.Request, topic string) (any, error) {
	q := r.URL.Query()
	a, err := readBrowseArgs(q, admin.DefaultPageLimit)
	if err != nil {
		return nil, err
	}
	eq := admin.EntryQuery{Partitions: a.partitions, After: a.after, Limit: a.limit,
		Key: q.Get("key"), UUID: strings.TrimSpace(q.Get("uuid")), Search: q.Get("q")}
	if eq.From, err = queryBound(q, "from"); err != nil {
		return nil, err
	}
	if eq.To, err = queryBound(q, "to"); err != nil {
		return nil, err
	}
	page, err := h.adm.FindEntries(r.Context(), topic, eq)
	if err != nil {
		return nil, err
	}
	v := browseView{Topic: topic, Entries: make([]entryView, 0, len(page.Entries)),
		pageView: pageOf(a.limit, page.Next, page.Scanned, page.Truncated)}
	for _, e := range page.Entries {
		v.Entries = append(v.Entries, h.entryOf(e))
	}
	return v, nil
}

// browsing reports whether a messages request uses the message browser's parameters
// (browse=1 alone asks for its first page).
func browsing(q url.Values) bool {
	for _, k := range []string{"browse", "from", "to", "key", "uuid", "q", "after"} {
		if q.Has(k) {
			return true
		}
	}
	return false
}

// resetPreviewView is GET .../reset-preview?to=OFFSET (admin.PreviewReset).
type resetPreviewView struct {
	Topic      string                 `json:"topic"`
	Group      string                 `json:"group"`
	To         string                 `json:"to"`
	Skip       int64                  `json:"skip"`
	Redeliver  int64                  `json:"redeliver"`
	Exact      bool                   `json:"exact"`
	Pending    int64                  `json:"pending"`
	Partitions []partitionPreviewView `json:"partitions"`
}

// partitionPreviewView is admin.PartitionResetPreview.
type partitionPreviewView struct {
	Partition int    `json:"partition"`
	Current   string `json:"current"`
	Target    string `json:"target"`
	Skip      int64  `json:"skip"`
	Redeliver int64  `json:"redeliver"`
	Exact     bool   `json:"exact"`
	Created   bool   `json:"created"`
	Pending   int64  `json:"pending"`
}

func (h *Handler) resetPreview(r *http.Request) (any, error) {
	topic, group := r.PathValue("topic"), r.PathValue("group")
	raw := r.URL.Query().Get("to")
	if strings.TrimSpace(raw) == "" {
		return nil, badRequestf("query parameter to is required: beginning, latest, a stream id, an RFC 3339 time or @unix-ms")
	}
	to, err := admin.ParseOffset(raw)
	if err != nil {
		return nil, err
	}
	pv, err := h.adm.PreviewReset(r.Context(), topic, group, to)
	if err != nil {
		return nil, err
	}
	v := resetPreviewView{Topic: topic, Group: group, To: to.String(), Skip: pv.Skip, Redeliver: pv.Redeliver,
		Exact: pv.Exact, Pending: pv.Pending, Partitions: make([]partitionPreviewView, 0, len(pv.Partitions))}
	for _, p := range pv.Partitions {
		v.Partitions = append(v.Partitions, partitionPreviewView{Partition: p.Partition, Current: p.Current, Target: p.Target,
			Skip: p.Skip, Redeliver: p.Redeliver, Exact: p.Exact, Created: p.Created, Pending: p.Pending})
	}
	return v, nil
}
