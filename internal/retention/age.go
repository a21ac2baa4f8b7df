package retention

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Pages is how a long deletion goes: Size entries at a time, the count removed before (of
// other streams), and what is told the total after each page (nil: nobody).
type Pages struct {
	Size     int
	Removed  int64
	Progress func(removed int64)
}

// DeleteOlder deletes the entries of stream whose id is below cutoff, p.Size entries at a
// time (XRANGE - (cutoff COUNT size, then XDEL of those ids, until a page comes back short),
// whether or not a group read them: operators' trims by age. It returns p.Removed plus what it
// removed, and calls p.Progress (when set) with that total after each page.
func DeleteOlder(ctx context.Context, rdb redis.UniversalClient, stream, cutoff string, p Pages) (int64, error) {
	page, progress, removed := p.Size, p.Progress, p.Removed
	for {
		msgs, err := rdb.XRangeN(ctx, stream, "-", "("+cutoff, int64(page)).Result()
		if err != nil {
			return removed, fmt.Errorf("read old entries of %s: %w", stream, err)
		}
		if len(msgs) == 0 {
			return removed, nil
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
		}
		c, err := rdb.XDel(ctx, stream, ids...).Result()
		removed += c
		if err != nil {
			return removed, fmt.Errorf("delete old entries of %s: %w", stream, err)
		}
		if progress != nil {
			progress(removed)
		}
		if len(msgs) < page {
			return removed, nil
		}
	}
}
