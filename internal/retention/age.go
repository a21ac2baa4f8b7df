package retention

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DeleteOlder deletes the entries of stream whose id is below cutoff, page entries at a time
// (XRANGE - (cutoff COUNT page, then XDEL of those ids, until a page comes back short),
// whether or not a group read them: operators' trims by age. removed is what was removed
// before (of other streams); it returns that plus what it removed, and calls progress (when
// set) with that total after each page.
func DeleteOlder(ctx context.Context, rdb redis.UniversalClient, stream, cutoff string, page int, progress func(removed int64), removed int64) (int64, error) {
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
