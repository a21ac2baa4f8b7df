package admin_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// TestPreviewReset: partition 0 holds 6 entries of which group g delivered 3; partition 1
// holds 6 and g delivered none; partition 2 holds 6 and g does not exist there. Each offset
// previews what ResetGroupOffset then does, and nothing moves.
func TestPreviewReset(t *testing.T) {
	e := newOpEnv(t)
	e.create("rp", 3)
	// six entries per partition in one millisecond, with explicit ids: an id of partition 0
	// falls at the same place in the others (published, they may span two milliseconds)
	for i := range 18 {
		e.xadd("rp", i%3, "1796000000000-"+strconv.Itoa(i/3), "m"+strconv.Itoa(i))
	}
	e.createGroup("rp", 0, "g", "0-0")
	e.createGroup("rp", 1, "g", "0-0")
	require.Len(t, e.readGroup("rp", 0, "g", "c", 3), 3)
	ids0 := e.ids("rp", 0)
	type row struct {
		Skip, Redeliver int64
		Created         bool
	}
	tests := []struct {
		name            string
		to              admin.Offset
		skip, redeliver int64
		rows            []row
	}{
		{"latest", admin.OffsetLatest(), 9, 0, []row{{Skip: 3}, {Skip: 6}, {Created: true}}},
		{"beginning", admin.OffsetBeginning(), 0, 9, []row{{Redeliver: 3}, {}, {Redeliver: 6, Created: true}}},
		{"an id", admin.OffsetID(ids0[4]), 2 + 5, 1, []row{{Skip: 2}, {Skip: 5}, {Redeliver: 1, Created: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv, err := e.adm.PreviewReset(e.ctx, "rp", "g", tt.to)
			require.NoError(t, err)
			var rows []row
			for _, p := range pv.Partitions {
				rows = append(rows, row{Skip: p.Skip, Redeliver: p.Redeliver, Created: p.Created})
			}
			assert.Equal(t, tt.rows, rows)
			assert.Equal(t, tt.skip, pv.Skip)
			assert.Equal(t, tt.redeliver, pv.Redeliver)
			assert.True(t, pv.Exact)
			assert.Equal(t, int64(3), pv.Pending, "what partition 0 delivered stays pending")
			assert.Equal(t, ids0[2], pv.Partitions[0].Current)
		})
	}
	before := e.groupNames(e.space.PartitionStream("rp", 0))["g"].LastDeliveredID
	assert.Equal(t, ids0[2], before, "a preview moves nothing")
	_, err := e.adm.PreviewReset(e.ctx, "rp", "nope", admin.OffsetLatest())
	assert.True(t, errors.Is(err, admin.ErrGroupNotFound))
}
