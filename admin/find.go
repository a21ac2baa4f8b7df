package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/streamq-dev/streamq/internal/stream"
)

// EntryQuery selects a page of a topic's entries for FindEntries. Every filter set must
// match; the zero query is the newest DefaultPageLimit entries over every partition.
type EntryQuery struct {
	// Partitions are the partitions read; empty: all.
	Partitions []int
	// From and To bound the entry ids, inclusive ("1700000000000-0", or a millisecond time
	// "1700000000000" standing for all its ids); "" for none. Use TimeFrom and TimeTo for
	// times.
	From, To string
	// Key matches the partition key the message was published with
	// (streamq.PartitionKeyMetadata), exactly.
	Key string
	// UUID matches the message UUID, exactly.
	UUID string
	// Search matches, ignoring case, a part of the UUID, the payload (inline payloads only)
	// or a metadata key or value.
	Search string
	// After is the previous page's Next: the page starts after it. Optional.
	After *Cursor
	// Limit is the most entries returned. Optional; default DefaultPageLimit, at most
	// MaxPageLimit.
	Limit int
	// ScanLimit is the most entries read, matching or not. Optional; default
	// DefaultScanLimit, at most MaxScanLimit.
	ScanLimit int
}

// partitionKeyMetadata is streamq.PartitionKeyMetadata (admin does not import streamq).
const partitionKeyMetadata = "partition_key"

// EntryPage is one page of FindEntries, newest first.
type EntryPage struct {
	Entries []Entry
	// Next is where the next page starts; nil when nothing is left.
	Next *Cursor
	// Scanned is how many entries were read; Truncated is true when ScanLimit stopped the
	// read before Limit entries matched (Next goes on from there).
	Scanned   int
	Truncated bool
}

// FindEntries returns a page of topic's entries that match q, newest first over the
// partitions (ids descending; for equal ids, partitions ascending). It reads the partitions'
// streams in chunks (XREVRANGE, one pipeline per round), filtering as it goes, and stops once
// q.Limit entries match or q.ScanLimit were read. A partition out of range or a bad id is
// ErrInvalidArgument.
func (a *Admin) FindEntries(ctx context.Context, topic string, q EntryQuery) (EntryPage, error) {
	r, err := a.rangeOf(ctx, topic, pageQuery{q.Partitions, q.From, q.To, q.After, q.Limit, q.ScanLimit})
	if err != nil {
		return EntryPage{}, err
	}
	for _, p := range r.partitions {
		r.keys = append(r.keys, a.space.PartitionStream(topic, p))
	}
	search := strings.ToLower(q.Search)
	r.keep = func(p int, e stream.Entry) bool {
		return q.matches(toEntry(topic, p, e.ID, e.Values), search)
	}
	res, err := a.scan(ctx, r)
	if err != nil {
		return EntryPage{}, fmt.Errorf("find entries of %q: %w", topic, err)
	}
	page := EntryPage{Next: res.next, Scanned: res.read, Truncated: res.truncated, Entries: make([]Entry, len(res.kept))}
	for i, s := range res.kept {
		page.Entries[i] = toEntry(topic, s.partition, s.entry.ID, s.entry.Values)
	}
	return page, nil
}

func (q EntryQuery) matches(e Entry, search string) bool {
	switch {
	case q.Key != "" && e.Metadata[partitionKeyMetadata] != q.Key:
		return false
	case q.UUID != "" && e.UUID != q.UUID:
		return false
	case search == "":
		return true
	}
	return containsFold(search, e.UUID, string(e.Payload)) || metadataContains(e.Metadata, search)
}

// containsFold reports whether any of texts contains lower (lower-cased already), ignoring
// case.
func containsFold(lower string, texts ...string) bool {
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), lower) {
			return true
		}
	}
	return false
}

func metadataContains(md map[string]string, lower string) bool {
	for k, v := range md {
		if containsFold(lower, k, v) {
			return true
		}
	}
	return false
}

// pageQuery is what a paged read of entries or dead letters asks for: the partitions (none:
// all), the ids from and to, where the page starts, and its limits.
type pageQuery struct {
	partitions       []int
	from, to         string
	after            *Cursor
	limit, scanLimit int
}

// rangeOf checks a paged read's arguments against topic and returns its range, without keys.
func (a *Admin) rangeOf(ctx context.Context, topic string, q pageQuery) (scanRange, error) {
	partitions, from, to, after, limit, scanLimit := q.partitions, q.from, q.to, q.after, q.limit, q.scanLimit
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return scanRange{}, err
	}
	r := scanRange{from: from, to: to, after: after, limit: limit, scanLimit: scanLimit}
	if r.limit <= 0 {
		r.limit = DefaultPageLimit
	}
	if r.scanLimit <= 0 {
		r.scanLimit = DefaultScanLimit
	}
	if r.limit > MaxPageLimit || r.scanLimit > MaxScanLimit {
		return scanRange{}, fmt.Errorf("%w: limit %d (at most %d), scan limit %d (at most %d)", ErrInvalidArgument, limit, MaxPageLimit, scanLimit, MaxScanLimit)
	}
	r.partitions = slices.Sorted(slices.Values(partitions))
	r.partitions = slices.Compact(r.partitions)
	if len(r.partitions) == 0 {
		for p := range n {
			r.partitions = append(r.partitions, p)
		}
	}
	for _, p := range r.partitions {
		if err := a.checkPartition(topic, p, n); err != nil {
			return scanRange{}, err
		}
	}
	return r, nil
}
