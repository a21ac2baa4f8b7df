package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/admin"
)

// maxSelected bounds the entries of one replay or delete request.
const maxSelected = 1000

// entryRef names one dead letter.
type entryRef struct {
	Partition int    `json:"partition"`
	ID        string `json:"id"`
}

// selectionRequest is the body of POST .../dlq/replay and .../dlq/delete.
type selectionRequest struct {
	Entries []entryRef `json:"entries"`
	Delete  bool       `json:"delete"` // replay only: remove each dead letter once replayed
	// AllGroups replays to every consumer group; by default only the group that failed it.
	AllGroups bool `json:"allGroups"`
	// Again replays dead letters replayed before too; by default they are left alone.
	Again bool `json:"again"`
}

// entryResult is the outcome for one selected dead letter.
type entryResult struct {
	Partition int    `json:"partition"`
	ID        string `json:"id"`
	NewID     string `json:"newId,omitempty"` // replay: the id appended to the partition
	Error     string `json:"error,omitempty"`
	// A replay without "again" of a letter replayed before does nothing: AlreadyReplayedAt and
	// AlreadyReplayedAs tell that earlier replay, Notice says so in words.
	AlreadyReplayedAt *jsonTime `json:"alreadyReplayedAt,omitempty"`
	AlreadyReplayedAs string    `json:"alreadyReplayedAs,omitempty"`
	Notice            string    `json:"notice,omitempty"`
}

// selectionView answers a replay or delete of selected dead letters.
type selectionView struct {
	Topic   string        `json:"topic"`
	Done    int           `json:"done"`    // replayed or deleted
	Skipped int           `json:"skipped"` // replay: replayed before, left alone (no "again")
	Results []entryResult `json:"results"`
}

func readSelection(r *http.Request) (selectionRequest, error) {
	var req selectionRequest
	if err := decodeBody(r, &req); err != nil {
		return req, err
	}
	if len(req.Entries) == 0 || len(req.Entries) > maxSelected {
		return req, badRequestf("entries must name 1 to %d dead letters, got %d", maxSelected, len(req.Entries))
	}
	return req, nil
}

// dlqReplay appends each selected dead letter back to its original partition. One that
// fails (not found any more) is reported in its result; the others still run. One replayed
// before is left alone unless "again", its result says when and as which entry.
func (h *Handler) dlqReplay(r *http.Request) (any, watermill.LogFields, error) {
	topic := r.PathValue("topic")
	req, err := readSelection(r)
	fields := watermill.LogFields{"topic": topic, "entries": refsText(req.Entries), "delete": req.Delete, "again": req.Again}
	if err != nil {
		return nil, fields, err
	}
	v := selectionView{Topic: topic, Results: make([]entryResult, 0, len(req.Entries))}
	for _, e := range req.Entries {
		res, err := h.replayOne(r.Context(), topic, e, req)
		if fatal(err) {
			return nil, fields, err
		}
		v.add(res, err)
	}
	fields["done"], fields["skipped"] = v.Done, v.Skipped
	return v, fields, nil
}

// replayOne replays one selected dead letter. One replayed before, without req.Again, is not
// an error: its result tells the earlier replay.
func (h *Handler) replayOne(ctx context.Context, topic string, e entryRef, req selectionRequest) (entryResult, error) {
	res := entryResult{Partition: e.Partition, ID: e.ID}
	var err error
	res.NewID, err = h.adm.ReplayDeadLetter(ctx, topic, e.Partition, e.ID,
		admin.ReplayOptions{Delete: req.Delete, AllGroups: req.AllGroups, Again: req.Again})
	var already *admin.AlreadyReplayedError
	if !errors.As(err, &already) {
		return res, err
	}
	res.AlreadyReplayedAt, res.AlreadyReplayedAs = replayedAt(already.ReplayedAt), already.ReplayedAs
	res.Notice = fmt.Sprintf(`already replayed at %s as %s: nothing replayed (send "again": true to replay it again)`,
		timeText(already.ReplayedAt), already.ReplayedAs)
	return res, nil
}

// dlqDelete deletes each selected dead letter.
func (h *Handler) dlqDelete(r *http.Request) (any, watermill.LogFields, error) {
	topic := r.PathValue("topic")
	req, err := readSelection(r)
	fields := watermill.LogFields{"topic": topic, "entries": refsText(req.Entries)}
	if err != nil {
		return nil, fields, err
	}
	v := selectionView{Topic: topic, Results: make([]entryResult, 0, len(req.Entries))}
	for _, e := range req.Entries {
		ok, err := h.adm.DeleteDeadLetter(r.Context(), topic, e.Partition, e.ID)
		if fatal(err) {
			return nil, fields, err
		}
		if err == nil && !ok {
			err = statusErrorf(http.StatusNotFound, "dead letter not found")
		}
		v.add(entryResult{Partition: e.Partition, ID: e.ID}, err)
	}
	fields["done"] = v.Done
	return v, fields, nil
}

// fatal reports an error that ends a selection request: an unknown topic, a Redis failure,
// or Redis full (the next replay would be refused too). An unknown entry or partition is
// reported in the entry's result instead.
func fatal(err error) bool {
	return err != nil && (errors.Is(err, admin.ErrTopicNotFound) || statusOf(err) == http.StatusInternalServerError ||
		statusOf(err) == http.StatusServiceUnavailable)
}

func (v *selectionView) add(res entryResult, err error) {
	switch {
	case err != nil:
		res.Error = err.Error()
	case res.AlreadyReplayedAt != nil:
		v.Skipped++
	default:
		v.Done++
	}
	v.Results = append(v.Results, res)
}

// refsText renders entry refs for the log ("2/1700000000000-0 3/..."), at most 20.
func refsText(refs []entryRef) string {
	var b strings.Builder
	for i, e := range refs {
		if i == 20 {
			b.WriteString(" …")
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(e.Partition) + "/" + e.ID)
	}
	return b.String()
}

// replayAllRequest is the body of POST .../dlq/replay-all.
type replayAllRequest struct {
	Limit          int    `json:"limit"`          // default admin.DefaultReplayLimit
	Delete         bool   `json:"delete"`         // remove the replayed dead letters
	Group          string `json:"group"`          // only those that failed in this group
	ReasonContains string `json:"reasonContains"` // only those whose reason contains this
	AllGroups      bool   `json:"allGroups"`      // replay to every group, not only the failing one
	Again          bool   `json:"again"`          // also those replayed before
	DryRun         bool   `json:"dryRun"`         // count what would be replayed, replay nothing
}

// countView answers replay-all ("replayed") and clear ("removed").
type countView struct {
	Topic    string `json:"topic"`
	Replayed *int   `json:"replayed,omitempty"`
	Removed  *int64 `json:"removed,omitempty"`
}

func (h *Handler) dlqReplayAll(r *http.Request) (any, watermill.LogFields, error) {
	topic := r.PathValue("topic")
	var req replayAllRequest
	err := decodeBody(r, &req)
	fields := watermill.LogFields{"topic": topic, "limit": req.Limit, "delete": req.Delete,
		"group": req.Group, "reasonContains": req.ReasonContains}
	if err != nil {
		return nil, fields, err
	}
	if req.Limit < 0 || req.Limit > 100000 {
		return nil, fields, badRequestf("limit must be from 0 (default %d) to 100000, got %d", admin.DefaultReplayLimit, req.Limit)
	}
	keep := func(d admin.DeadLetter) bool {
		return (req.Group == "" || d.Group == req.Group) && strings.Contains(d.Reason, req.ReasonContains)
	}
	n, err := h.adm.ReplayAll(r.Context(), topic, req.Limit, keep,
		admin.ReplayOptions{Delete: req.Delete, AllGroups: req.AllGroups, Again: req.Again, DryRun: req.DryRun})
	fields["done"] = n
	if err != nil {
		return nil, fields, err
	}
	return countView{Topic: topic, Replayed: &n}, fields, nil
}

func (h *Handler) dlqClear(r *http.Request) (any, watermill.LogFields, error) {
	topic := r.PathValue("topic")
	fields := watermill.LogFields{"topic": topic}
	var req struct{}
	if err := decodeBody(r, &req); err != nil {
		return nil, fields, err
	}
	n, err := h.adm.ClearDLQ(r.Context(), topic)
	fields["done"] = n
	if err != nil {
		return nil, fields, err
	}
	return countView{Topic: topic, Removed: &n}, fields, nil
}
