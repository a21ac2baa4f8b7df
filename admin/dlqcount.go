package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamq-dev/streamq/internal/dlq"
)

// DLQCountKey is what CountDeadLetters counts dead letters by.
type DLQCountKey string

// The keys of DLQCountQuery.By.
const (
	CountByReason    DLQCountKey = "reason"    // the whole reason, as written
	CountByGroup     DLQCountKey = "group"     // the consumer group that failed the letter ("" for none)
	CountByPartition DLQCountKey = "partition" // the original partition, as a decimal number
)

// Bounds of CountDeadLetters.
const (
	// DefaultCountTop is how many counts CountDeadLetters returns when the query gives no Top.
	DefaultCountTop = 10
	// DefaultCountScanLimit is how many dead letters CountDeadLetters reads at most when the
	// query gives no ScanLimit; MaxCountScanLimit bounds ScanLimit.
	DefaultCountScanLimit = 100000
	MaxCountScanLimit     = 1000000
)

// countPage is how many dead letters one read of CountDeadLetters asks for.
const countPage = 500

// DeadLetterBrief is what CountDeadLetters knows of a dead letter: no message, no marks.
type DeadLetterBrief struct {
	Partition int
	ID        string // the DLQ entry id
	Reason    string
	Group     string
	FailedAt  time.Time
}

// DLQCountQuery selects the dead letters CountDeadLetters counts and what it counts them by.
// Every filter set must match; the zero query counts every dead letter by reason.
type DLQCountQuery struct {
	// By is what letters are counted by; default CountByReason.
	By DLQCountKey
	// Partitions are the (original) partitions whose DLQ is read; empty: all.
	Partitions []int
	// Group matches the consumer group that failed the letter, exactly.
	Group string
	// Reason matches a part of the reason, ignoring case (as DLQQuery.Reason).
	Reason string
	// Since and Until bound when the letter was dead-lettered (its DLQ entry id's time),
	// inclusive; zero for none.
	Since, Until time.Time
	// Keep, when set, is asked about each letter the filters above pass: false leaves it out.
	Keep func(DeadLetterBrief) bool
	// Top is how many counts are returned, the largest first; 0: DefaultCountTop; negative:
	// all of them. The letters of the others are summed in DLQCounts.Others.
	Top int
	// ScanLimit is how many dead letters are read at most, newest first per partition; 0:
	// DefaultCountScanLimit. When it stops the read, DLQCounts.Truncated is set.
	ScanLimit int
}

// DLQCount is the number of dead letters of one key.
type DLQCount struct {
	Key     string // the reason, the group, or the partition number
	Letters int64
	// Oldest and Newest are the failure times of the oldest and the newest letter counted.
	Oldest, Newest time.Time
}

// DLQCounts is what CountDeadLetters found.
type DLQCounts struct {
	Topic string
	By    DLQCountKey
	// Counts are the largest counts, at most the query's Top, by count descending (equal
	// counts: the newest failure first).
	Counts []DLQCount
	// Letters is how many letters matched; Keys how many distinct keys they have; Others how
	// many letters are under the keys beyond Counts.
	Letters int64
	Keys    int
	Others  int64
	// Scanned is how many letters were read; Truncated reports that ScanLimit stopped the
	// read: the counts are then those of the Scanned newest letters per partition read.
	Scanned   int
	Truncated bool
}

// CountDeadLetters counts topic's dead letters that match q by reason (or by group or
// partition: q.By), largest first: 882 letters of 5 reasons are 5 lines. It reads the DLQs
// newest first, q.ScanLimit letters at most, a page of 500 at a time.
func (a *Admin) CountDeadLetters(ctx context.Context, topic string, q DLQCountQuery) (DLQCounts, error) {
	q, err := q.withDefaults()
	if err != nil {
		return DLQCounts{}, err
	}
	r, err := a.rangeOf(ctx, topic, pageQuery{partitions: q.Partitions})
	if err != nil {
		return DLQCounts{}, err
	}
	c := newCounter(q)
	for _, p := range r.partitions {
		if err := a.countPartition(ctx, topic, p, q, c); err != nil {
			return DLQCounts{}, fmt.Errorf("count dead letters of %q: %w", topic, err)
		}
	}
	return c.result(topic, q), nil
}

func (q DLQCountQuery) withDefaults() (DLQCountQuery, error) {
	switch q.By {
	case "":
		q.By = CountByReason
	case CountByReason, CountByGroup, CountByPartition:
	default:
		return q, fmt.Errorf("%w: count by %q: want reason, group or partition", ErrInvalidArgument, q.By)
	}
	if q.Top == 0 {
		q.Top = DefaultCountTop
	}
	if q.ScanLimit == 0 {
		q.ScanLimit = DefaultCountScanLimit
	}
	if q.ScanLimit < 0 || q.ScanLimit > MaxCountScanLimit {
		return q, fmt.Errorf("%w: scan limit %d (1 to %d)", ErrInvalidArgument, q.ScanLimit, MaxCountScanLimit)
	}
	q.Reason = strings.ToLower(q.Reason)
	return q, nil
}

// countPartition reads partition p's DLQ newest first into c, until it is read or c is full.
func (a *Admin) countPartition(ctx context.Context, topic string, p int, q DLQCountQuery, c *counter) error {
	end, start := "+", "-"
	if !q.Until.IsZero() {
		end = timeBound(q.Until)
	}
	if !q.Since.IsZero() {
		start = timeBound(q.Since)
	}
	for !c.full() {
		page := min(countPage, c.left())
		briefs, err := dlq.Briefs(ctx, a.rdb, a.space.DLQ(topic, p), end, start, int64(page))
		if err != nil {
			return err
		}
		for _, b := range briefs {
			c.add(DeadLetterBrief{Partition: p, ID: b.ID, Reason: b.Reason, Group: b.Group, FailedAt: b.FailedAt})
		}
		if len(briefs) < page {
			return nil
		}
		end = "(" + briefs[len(briefs)-1].ID
	}
	c.truncated = true
	return nil
}

// counter adds up dead letters by key.
type counter struct {
	q         DLQCountQuery
	counts    map[string]*DLQCount
	letters   int64
	scanned   int
	truncated bool
}

func newCounter(q DLQCountQuery) *counter { return &counter{q: q, counts: map[string]*DLQCount{}} }

func (c *counter) full() bool { return c.scanned >= c.q.ScanLimit }
func (c *counter) left() int  { return c.q.ScanLimit - c.scanned }

// add counts b when it passes the query's filters.
func (c *counter) add(b DeadLetterBrief) {
	c.scanned++
	q := c.q
	if (q.Group != "" && b.Group != q.Group) || !strings.Contains(strings.ToLower(b.Reason), q.Reason) ||
		(q.Keep != nil && !q.Keep(b)) {
		return
	}
	key := b.Reason
	switch q.By {
	case CountByGroup:
		key = b.Group
	case CountByPartition:
		key = strconv.Itoa(b.Partition)
	}
	n := c.counts[key]
	if n == nil {
		n = &DLQCount{Key: key, Oldest: b.FailedAt, Newest: b.FailedAt}
		c.counts[key] = n
	}
	n.Letters++
	c.letters++
	if b.FailedAt.Before(n.Oldest) {
		n.Oldest = b.FailedAt
	}
	if b.FailedAt.After(n.Newest) {
		n.Newest = b.FailedAt
	}
}

// result sorts the counts, largest first, and keeps the query's Top.
func (c *counter) result(topic string, q DLQCountQuery) DLQCounts {
	all := make([]DLQCount, 0, len(c.counts))
	for _, n := range c.counts {
		all = append(all, *n)
	}
	slices.SortFunc(all, func(x, y DLQCount) int {
		return cmp.Or(cmp.Compare(y.Letters, x.Letters), y.Newest.Compare(x.Newest), strings.Compare(x.Key, y.Key))
	})
	out := DLQCounts{Topic: topic, By: q.By, Letters: c.letters, Keys: len(all), Scanned: c.scanned, Truncated: c.truncated}
	if q.Top > 0 && len(all) > q.Top {
		for _, n := range all[q.Top:] {
			out.Others += n.Letters
		}
		all = all[:q.Top]
	}
	out.Counts = all
	return out
}
