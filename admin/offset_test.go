package admin_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

func TestParseOffset(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want admin.Offset
		str  string
	}{
		{"0", admin.OffsetBeginning(), "beginning"},
		{"0-0", admin.OffsetBeginning(), "beginning"},
		{"beginning", admin.OffsetBeginning(), "beginning"},
		{" Earliest ", admin.OffsetBeginning(), "beginning"},
		{"$", admin.OffsetLatest(), "latest"},
		{"latest", admin.OffsetLatest(), "latest"},
		{"END", admin.OffsetLatest(), "latest"},
		{"1700000000000-4", admin.OffsetID("1700000000000-4"), "1700000000000-4"},
		{"1700000000000", admin.OffsetID("1700000000000"), "1700000000000"},
		{"2024-05-01T12:00:00Z", admin.OffsetTime(at), "2024-05-01T12:00:00Z"},
		{"2024-05-01T14:00:00+02:00", admin.OffsetTime(at), "2024-05-01T12:00:00Z"},
		{"@1714564800000", admin.OffsetTime(at), "2024-05-01T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := admin.ParseOffset(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.str, got.String())
			assert.Equal(t, tt.want.String(), got.String())
			again, err := admin.ParseOffset(got.String())
			require.NoError(t, err)
			assert.Equal(t, got.String(), again.String(), "String round-trips")
		})
	}
	for _, bad := range []string{"", "yesterday", "12-x", "-5", "@soon", "2024-05-01", "15m"} {
		_, err := admin.ParseOffset(bad)
		assert.ErrorIs(t, err, admin.ErrInvalidArgument, bad)
		if err != nil {
			assert.Contains(t, err.Error(), `"`+bad+`"`)
		}
	}
}

// TestResetGroupOffset resets a group that consumed everything and acked all but one entry
// per partition, then reads what the group is delivered next.
func TestResetGroupOffset(t *testing.T) {
	e := newOpEnv(t)
	ids := [][]string{
		{"1000-0", "2000-0", "3000-0", "3000-1", "4000-0"},
		{"1500-0", "2500-0", "3000-0", "3500-0"},
	}
	tests := []struct {
		name    string
		to      admin.Offset
		missing bool // the group is destroyed on partition 1 first: reset creates it
		want    [][]string
	}{
		{"time", admin.OffsetTime(time.UnixMilli(3000)), false, [][]string{ids[0][2:], ids[1][2:]}},
		{"time between entries", mustOffset(t, "@2100"), false, [][]string{ids[0][2:], ids[1][1:]}},
		{"time creates missing group", admin.OffsetTime(time.UnixMilli(3001)), true, [][]string{ids[0][4:], ids[1][3:]}},
		{"beginning", admin.OffsetBeginning(), false, ids},
		{"latest", admin.OffsetLatest(), false, [][]string{nil, nil}},
		{"id", admin.OffsetID("2000-0"), false, [][]string{ids[0][2:], ids[1][1:]}},
		{"id creates missing group", mustOffset(t, "3000"), true, [][]string{ids[0][3:], ids[1][3:]}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := "reset-" + string(rune('a'+i))
			e.create(topic, 2)
			for p := range 2 {
				for _, id := range ids[p] {
					e.xadd(topic, p, id, id)
				}
				e.createGroup(topic, p, "g", "0-0")
				read := e.readGroup(topic, p, "g", "c", 100)
				require.Equal(t, ids[p], read)
				require.NoError(t, e.client.XAck(e.ctx, e.space.PartitionStream(topic, p), "g", read[1:]...).Err())
			}
			if tt.missing {
				require.NoError(t, e.client.XGroupDestroy(e.ctx, e.space.PartitionStream(topic, 1), "g").Err())
			}

			res, err := e.adm.ResetGroupOffset(e.ctx, topic, "g", tt.to)
			require.NoError(t, err)
			assert.Equal(t, 2, res.Partitions)
			assert.True(t, res.PendingKept)
			assert.Contains(t, res.Note, "pending entries kept")
			assert.Equal(t, tt.missing, strings.Contains(res.Note, "group created on 1 partitions"))

			pending, err := e.adm.Pending(e.ctx, topic, "g", admin.PendingOptions{Sort: admin.SortByID})
			require.NoError(t, err)
			require.Len(t, pending, 1+boolInt(!tt.missing), "pending kept")
			assert.Equal(t, ids[0][0], pending[0].ID)
			st, err := e.adm.GroupStats(e.ctx, topic, "g")
			require.NoError(t, err)
			for p := range 2 {
				assert.Equal(t, int64(len(tt.want[p])), st.Partitions[p].Lag, "lag of partition %d", p)
				assert.True(t, st.Partitions[p].LagExact)
				assert.Equal(t, tt.want[p], e.readGroup(topic, p, "g", "c", 100), "partition %d", p)
			}
		})
	}
}

func TestResetGroupOffsetErrors(t *testing.T) {
	e := newOpEnv(t)
	e.create("r", 1)
	e.xadd("r", 0, "5-0", "x")
	e.createGroup("r", 0, "g", "0-0")
	_, err := e.adm.ResetGroupOffset(e.ctx, "r", "g", admin.OffsetID("nope"))
	assert.ErrorIs(t, err, admin.ErrInvalidArgument)
	g := e.groupNames(e.space.PartitionStream("r", 0))["g"]
	assert.Equal(t, "0-0", g.LastDeliveredID, "nothing changed")
	_, err = e.adm.ResetGroupOffset(e.ctx, "r", "g", admin.OffsetTime(time.UnixMilli(0)))
	require.NoError(t, err)
	assert.Equal(t, "0-0", e.groupNames(e.space.PartitionStream("r", 0))["g"].LastDeliveredID)
}

func mustOffset(t *testing.T, s string) admin.Offset {
	t.Helper()
	o, err := admin.ParseOffset(s)
	require.NoError(t, err)
	return o
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
