package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/retention"
)

// sweepPage is how many payload index members one sweep step checks.
const sweepPage = 500

// SweepOrphanedPayloads deletes the offloaded payloads of topic whose entry no longer exists
// (trimmed or deleted, for instance by Trim or TrimByAge), on every partition, and returns
// how many it deleted. It is the sweep the subscribers' lease holders run in the background,
// run at once over the whole payload index; payloads indexed less than a minute before the
// Redis server's now are left to a later sweep. A payload whose entry still exists is never
// deleted.
func (a *Admin) SweepOrphanedPayloads(ctx context.Context, topic string) (int64, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return 0, err
	}
	now, err := a.serverTime(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for p := range n {
		c, err := a.sweepPartition(ctx, topic, p, now.Add(-retention.OrphanGrace))
		total += c
		if err != nil {
			return total, fmt.Errorf("sweep payloads of %q partition %d: %w", topic, p, err)
		}
	}
	return total, nil
}

// sweepPartition sweeps partition p's whole payload index, a page at a time.
func (a *Admin) sweepPartition(ctx context.Context, topic string, p int, olderThan time.Time) (int64, error) {
	key := func(ref string) string { return a.space.Payload(topic, p, ref) }
	var total int64
	for cursor := int64(0); ; {
		c, next, err := retention.SweepOrphans(ctx, a.rdb, retention.Sweep{Stream: a.space.PartitionStream(topic, p),
			Index: a.space.PayloadIndex(topic, p), Key: key, OlderThan: olderThan, Cursor: cursor, Limit: sweepPage})
		total += int64(c)
		if err != nil || next == 0 {
			return total, err
		}
		cursor = next
	}
}
