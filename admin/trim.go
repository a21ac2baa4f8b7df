package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// DefaultTrimPageSize is TrimByAge's default page.
const DefaultTrimPageSize = 500

// Trim caps topic at maxLen entries in total, amortized over its partitions: each partition
// keeps its newest ceil(maxLen/partitions) entries (exact XTRIM MAXLEN). It returns how many
// entries it removed. Trimming ignores consumer groups: entries not yet delivered or acked
// are removed too, and their offloaded payloads are swept later by the subscribers'
// housekeeper.
func (a *Admin) Trim(ctx context.Context, topic string, maxLen int64) (int64, error) {
	if maxLen < 0 {
		return 0, fmt.Errorf("%w: trim %q to %d entries", ErrInvalidArgument, topic, maxLen)
	}
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	keep := (maxLen + int64(n) - 1) / int64(n)
	var removed int64
	for p := range n {
		c, err := retention.TrimLen(ctx, a.rdb, a.space.PartitionStream(topic, p), keep)
		removed += c
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// TrimOptions tunes TrimByAge. Zero values mean the defaults.
type TrimOptions struct {
	// PageSize is how many entries one XRANGE + XDEL step removes. Optional; default
	// DefaultTrimPageSize (500).
	PageSize int
	// Progress, if set, is called after each page with the total removed so far.
	Progress func(removed int64)
}

// TrimByAge removes the entries of topic older than age (id time before the Redis server's
// now minus age), partition by partition, a page at a time: XRANGE - (cutoff COUNT PageSize,
// then XDEL of those ids, until a page comes back short. It returns how many entries it
// removed. Like Trim it ignores consumer groups.
func (a *Admin) TrimByAge(ctx context.Context, topic string, age time.Duration, opts TrimOptions) (int64, error) {
	if age < 0 || opts.PageSize < 0 {
		return 0, fmt.Errorf("%w: trim %q by age %s, page size %d", ErrInvalidArgument, topic, age, opts.PageSize)
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultTrimPageSize
	}
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	now, err := a.serverTime(ctx)
	if err != nil {
		return 0, err
	}
	cutoff := streamid.Min(now.Add(-age))
	var removed int64
	for p := 0; p < n && err == nil; p++ {
		removed, err = retention.DeleteOlder(ctx, a.rdb, a.space.PartitionStream(topic, p), cutoff,
			retention.Pages{Size: opts.PageSize, Progress: opts.Progress, Removed: removed})
	}
	return removed, err
}
