package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestPendingSampling makes six pending entries on two partitions by hand, with idle times and
// delivery counts set by XCLAIM IDLE / RETRYCOUNT, and checks the sorts, MinIdle, Limit and
// the per-partition sample.
func TestPendingSampling(t *testing.T) {
	e := newOpEnv(t)
	const topic, group = "jobs", "w"
	e.create(topic, 2)
	e.publishRoundRobin(topic, 6, 2)
	// idle and deliveries of the entries of each partition, in id order.
	seeds := [][]struct {
		idle       time.Duration
		deliveries int64
	}{
		{{10 * time.Second, 1}, {30 * time.Second, 5}, {20 * time.Second, 2}},
		{{40 * time.Second, 3}, {5 * time.Second, 4}, {50 * time.Second, 1}},
	}
	byIdle := map[time.Duration]string{} // idle -> "p/id"
	deliveries := map[string]int64{}     // "p/id" -> deliveries
	var allIDs []string
	for p, ss := range seeds {
		e.createGroup(topic, p, group, "0-0")
		ids := e.readGroup(topic, p, group, "c"+string(rune('0'+p)), 10)
		require.Len(t, ids, 3)
		for i, s := range ss {
			require.NoError(t, e.client.Do(e.ctx, "XCLAIM", e.space.PartitionStream(topic, p), group, "c"+string(rune('0'+p)),
				0, ids[i], "IDLE", s.idle.Milliseconds(), "RETRYCOUNT", s.deliveries, "JUSTID").Err())
			byIdle[s.idle] = key(p, ids[i])
			deliveries[key(p, ids[i])] = s.deliveries
		}
		allIDs = append(allIDs, ids...)
	}
	idles := func(es []admin.PendingEntry) []time.Duration {
		out := make([]time.Duration, len(es))
		for i, x := range es {
			out[i] = x.Idle.Truncate(5 * time.Second) // Redis' clock moves on meanwhile
			assert.Equal(t, byIdle[out[i]], key(x.Partition, x.ID))
		}
		return out
	}
	s := time.Second
	tests := []struct {
		name string
		opts admin.PendingOptions
		want []time.Duration // idle of each entry, in order
	}{
		{"by idle", admin.PendingOptions{}, []time.Duration{50 * s, 40 * s, 30 * s, 20 * s, 10 * s, 5 * s}},
		{"by deliveries", admin.PendingOptions{Sort: admin.SortByDeliveries}, []time.Duration{30 * s, 5 * s, 40 * s, 20 * s, 50 * s, 10 * s}},
		{"min idle", admin.PendingOptions{MinIdle: 25 * s}, []time.Duration{50 * s, 40 * s, 30 * s}},
		{"limit", admin.PendingOptions{Limit: 2}, []time.Duration{50 * s, 40 * s}},
		{"sample of one per partition", admin.PendingOptions{PerPartition: 1}, []time.Duration{40 * s, 10 * s}},
		{"by deliveries, min idle, limit", admin.PendingOptions{Sort: admin.SortByDeliveries, MinIdle: 15 * s, Limit: 3}, []time.Duration{30 * s, 40 * s, 20 * s}},
		{"by idle, ascending", admin.PendingOptions{Order: admin.Ascending}, []time.Duration{5 * s, 10 * s, 20 * s, 30 * s, 40 * s, 50 * s}},
		{"by idle, descending", admin.PendingOptions{Order: admin.Descending}, []time.Duration{50 * s, 40 * s, 30 * s, 20 * s, 10 * s, 5 * s}},
		{"by deliveries, ascending", admin.PendingOptions{Sort: admin.SortByDeliveries, Order: admin.Ascending},
			[]time.Duration{10 * s, 50 * s, 20 * s, 40 * s, 5 * s, 30 * s}},
		{"by idle, ascending, min idle, limit", admin.PendingOptions{Order: admin.Ascending, MinIdle: 15 * s, Limit: 2}, []time.Duration{20 * s, 30 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.adm.Pending(e.ctx, topic, group, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, idles(got))
		})
	}

	t.Run("by id, descending", func(t *testing.T) {
		got, err := e.adm.Pending(e.ctx, topic, group, admin.PendingOptions{Sort: admin.SortByID, Order: admin.Descending})
		require.NoError(t, err)
		require.Len(t, got, 6)
		for i := 1; i < len(got); i++ {
			assert.False(t, idBefore(got[i-1].ID, got[i].ID), "%s before %s", got[i-1].ID, got[i].ID)
		}
		assert.ElementsMatch(t, allIDs, pendingIDs(got))
	})

	t.Run("by id", func(t *testing.T) {
		got, err := e.adm.Pending(e.ctx, topic, group, admin.PendingOptions{Sort: admin.SortByID})
		require.NoError(t, err)
		require.Len(t, got, 6)
		for i := 1; i < len(got); i++ {
			assert.False(t, idBefore(got[i].ID, got[i-1].ID), "%s after %s", got[i].ID, got[i-1].ID)
		}
		assert.ElementsMatch(t, allIDs, pendingIDs(got))
		for _, x := range got {
			assert.Equal(t, "c"+string(rune('0'+x.Partition)), x.Consumer)
			assert.Equal(t, deliveries[key(x.Partition, x.ID)], x.Deliveries)
		}
	})

	t.Run("bad options", func(t *testing.T) {
		_, err := e.adm.Pending(e.ctx, topic, group, admin.PendingOptions{MinIdle: -s})
		assert.ErrorIs(t, err, admin.ErrInvalidArgument)
		_, err = e.adm.Pending(e.ctx, topic, group, admin.PendingOptions{Sort: 7})
		assert.ErrorIs(t, err, admin.ErrInvalidArgument)
		_, err = e.adm.Pending(e.ctx, topic, group, admin.PendingOptions{Order: 3})
		assert.ErrorIs(t, err, admin.ErrInvalidArgument)
	})
}

func key(p int, id string) string { return string(rune('0'+p)) + "/" + id }

func pendingIDs(es []admin.PendingEntry) []string {
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.ID
	}
	return out
}
