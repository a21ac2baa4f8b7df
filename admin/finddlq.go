package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/stream"
)

// DLQQuery selects a page of a topic's dead letters for FindDeadLetters. Every filter set
// must match; the zero query is the newest DefaultPageLimit dead letters of every partition.
type DLQQuery struct {
	// Partitions are the (original) partitions whose DLQ is read; empty: all.
	Partitions []int
	// Group matches the consumer group that rejected the message, exactly.
	Group string
	// Reason matches a part of the reason, ignoring case.
	Reason string
	// Search matches, ignoring case, a part of the UUID, the reason, the payload, a metadata
	// key or value, or the original message or stream id.
	Search string
	// Since and Until bound when the message was dead-lettered (its DLQ entry id's time),
	// inclusive; zero for none.
	Since, Until time.Time
	// After is the previous page's Next: the page starts after it. Optional.
	After *Cursor
	// Limit and ScanLimit are EntryQuery's.
	Limit, ScanLimit int
}

// DLQPage is one page of FindDeadLetters, newest first, with the replay marks.
type DLQPage struct {
	Letters   []DeadLetter
	Next      *Cursor // where the next page starts; nil when nothing is left
	Scanned   int     // dead letters read
	Truncated bool    // ScanLimit stopped the read before Limit matched
}

// FindDeadLetters returns a page of topic's dead letters that match q, newest first over the
// partitions' DLQs (as FindEntries), each with its replay mark (ReplayedAt, ReplayedAs).
func (a *Admin) FindDeadLetters(ctx context.Context, topic string, q DLQQuery) (DLQPage, error) {
	r, err := a.rangeOf(ctx, topic, pageQuery{q.Partitions, timeBound(q.Since), timeBound(q.Until), q.After, q.Limit, q.ScanLimit})
	if err != nil {
		return DLQPage{}, err
	}
	for _, p := range r.partitions {
		r.keys = append(r.keys, a.space.DLQ(topic, p))
	}
	q.Reason, q.Search = strings.ToLower(q.Reason), strings.ToLower(q.Search)
	r.keep = func(p int, e stream.Entry) bool {
		return q.matches(toDeadLetter(topic, p, dlq.Entry{ID: e.ID, Values: e.Values}))
	}
	res, err := a.scan(ctx, r)
	if err != nil {
		return DLQPage{}, fmt.Errorf("find dead letters of %q: %w", topic, err)
	}
	page := DLQPage{Next: res.next, Scanned: res.read, Truncated: res.truncated}
	page.Letters, err = a.markedPage(ctx, topic, res.kept)
	return page, err
}

// timeBound is the id bound of t's millisecond ("" for the zero time).
func timeBound(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprint(max(t.UnixMilli(), 0))
}

func (q DLQQuery) matches(d DeadLetter) bool {
	switch {
	case q.Group != "" && d.Group != q.Group:
		return false
	case q.Reason != "" && !strings.Contains(strings.ToLower(d.Reason), q.Reason):
		return false
	case q.Search == "":
		return true
	}
	return containsFold(q.Search, d.UUID, d.Reason, string(d.Payload), d.OriginalMessageID, d.OriginalStreamID, d.Raw) ||
		metadataContains(d.Metadata, q.Search)
}

// markedPage decodes the kept dead letters in their order, with their replay marks (one read
// of the marks per partition).
func (a *Admin) markedPage(ctx context.Context, topic string, kept []scanned) ([]DeadLetter, error) {
	byPartition := map[int][]int{} // partition -> indexes into kept
	for i, s := range kept {
		byPartition[s.partition] = append(byPartition[s.partition], i)
	}
	out := make([]DeadLetter, len(kept))
	for p, idx := range byPartition {
		letters := make([]dlq.Entry, len(idx))
		for j, i := range idx {
			letters[j] = dlq.Entry{ID: kept[i].entry.ID, Values: kept[i].entry.Values}
		}
		marked, err := a.marked(ctx, topic, p, letters)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = marked[j]
		}
	}
	return out, nil
}
