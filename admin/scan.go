package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Bounds of the paged reads (FindEntries, FindDeadLetters).
const (
	// DefaultPageLimit is how many entries a page holds when the query gives no limit.
	DefaultPageLimit = 50
	// MaxPageLimit bounds a page.
	MaxPageLimit = 1000
	// DefaultScanLimit is how many entries one page request reads at most, filtered out or
	// not, when the query gives no scan limit.
	DefaultScanLimit = 10000
	// MaxScanLimit bounds ScanLimit.
	MaxScanLimit = 100000
)

// Cursor is a position in the newest-first order of a topic's entries over its partitions
// (ids descending, partitions ascending for equal ids), written "P/ID". A page's Next is the
// last entry it read; the next page starts after it.
type Cursor struct {
	Partition int
	ID        string
}

// String writes c as "P/ID".
func (c Cursor) String() string { return strconv.Itoa(c.Partition) + "/" + c.ID }

// ParseCursor reads "P/ID"; ErrInvalidArgument otherwise.
func ParseCursor(s string) (Cursor, error) {
	p, id, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(p)
	if _, _, valid := streamid.Parse(id); !ok || err != nil || n < 0 || !valid {
		return Cursor{}, fmt.Errorf("%w: cursor %q: want PARTITION/STREAM-ID", ErrInvalidArgument, s)
	}
	return Cursor{Partition: n, ID: id}, nil
}

// scanRange is what a paged read goes through: the streams of some partitions, newest first,
// between two ids, after a cursor.
type scanRange struct {
	keys       []string // the streams read
	partitions []int    // the partition of each
	from, to   string   // inclusive id bounds, "" for none
	after      *Cursor
	keep       func(p int, e stream.Entry) bool
	limit      int // entries kept at most
	scanLimit  int // entries read at most
}

// scanResult is what a scan kept, and where it stopped.
type scanResult struct {
	kept      []scanned
	next      *Cursor // the last entry read, when more may follow
	read      int
	truncated bool // scanLimit was reached
}

type scanned struct {
	partition int
	entry     stream.Entry
}

// part is one partition's place in a scan.
type part struct {
	key  string
	p    int
	buf  []stream.Entry // read, not yet merged
	end  string         // where the next read starts (newest first)
	done bool           // nothing is left past buf
}

// scan reads r newest first over its partitions, in chunks, merging them in cursor order,
// until r.limit entries are kept, r.scanLimit read, or nothing is left.
func (a *Admin) scan(ctx context.Context, r scanRange) (scanResult, error) {
	parts := r.parts()
	chunk := int64(min(max(r.limit+1, 50), 500))
	var res scanResult
	var last scanned
	for res.read < r.scanLimit && len(res.kept) < r.limit {
		if err := a.fill(ctx, parts, orDefault(r.from, "-"), chunk); err != nil {
			return scanResult{}, err
		}
		next := newestHead(parts)
		if next == nil {
			return res, nil // nothing left
		}
		last = scanned{partition: next.p, entry: next.buf[0]}
		next.buf = next.buf[1:]
		res.read++
		if r.keep(last.partition, last.entry) {
			res.kept = append(res.kept, last)
		}
	}
	res.truncated = len(res.kept) < r.limit
	if more(parts) {
		res.next = &Cursor{Partition: last.partition, ID: last.entry.ID}
	}
	return res, nil
}

// parts are the partitions of r, each starting at r.to or after r.after.
func (r scanRange) parts() []*part {
	out := make([]*part, len(r.keys))
	for i, k := range r.keys {
		out[i] = &part{key: k, p: r.partitions[i], end: orDefault(r.to, "+")}
		if c := r.after; c != nil {
			out[i].end = c.ID // the entries after the cursor: equal ids on later partitions
			if r.partitions[i] <= c.Partition {
				out[i].end = "(" + c.ID
			}
		}
	}
	return out
}

// fill reads the next chunk of every partition whose buffer is empty, in one pipeline.
func (a *Admin) fill(ctx context.Context, parts []*part, start string, chunk int64) error {
	var empty []*part
	var keys, ends []string
	for _, pt := range parts {
		if len(pt.buf) == 0 && !pt.done {
			empty, keys, ends = append(empty, pt), append(keys, pt.key), append(ends, pt.end)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	got, err := stream.RevRangeEach(ctx, a.rdb, keys, ends, start, chunk)
	if errors.Is(err, stream.ErrInvalidID) {
		return fmt.Errorf("%w: range %q..%q: %w", ErrInvalidArgument, start, ends[0], err)
	}
	if err != nil {
		return err
	}
	for i, pt := range empty {
		pt.buf, pt.done = got[i], int64(len(got[i])) < chunk
		if n := len(got[i]); n > 0 {
			pt.end = "(" + got[i][n-1].ID
		}
	}
	return nil
}

// newestHead is the partition whose next entry comes first in cursor order, nil when all
// are drained.
func newestHead(parts []*part) *part {
	var best *part
	for _, pt := range parts {
		if len(pt.buf) == 0 {
			continue
		}
		if best == nil || streamid.Less(best.buf[0].ID, pt.buf[0].ID) {
			best = pt // parts are in partition order: an equal id keeps the lower partition
		}
	}
	return best
}

// more reports whether some partition may have entries left.
func more(parts []*part) bool {
	for _, pt := range parts {
		if len(pt.buf) > 0 || !pt.done {
			return true
		}
	}
	return false
}
