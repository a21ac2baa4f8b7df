package admin_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// findFixture writes entries with known ids on 3 partitions of "find": partition p holds
// ids 1000+10k-p for k = 1..4 (so partitions interleave), and ids 5000-0 on partitions 0
// and 2 (an equal id on two partitions). Entry "u-P-K" has metadata k = its UUID.
func findFixture(t *testing.T) *opEnv {
	e := newOpEnv(t)
	e.create("find", 3)
	for p := range 3 {
		for k := 1; k <= 4; k++ {
			e.xadd("find", p, strconv.Itoa(1000+10*k)+"-"+strconv.Itoa(p), "u-"+strconv.Itoa(p)+"-"+strconv.Itoa(k))
		}
	}
	e.xadd("find", 0, "5000-0", "tie-0")
	e.xadd("find", 2, "5000-0", "tie-2")
	return e
}

func refsOf(entries []admin.Entry) []string {
	out := make([]string, len(entries))
	for i, en := range entries {
		out[i] = strconv.Itoa(en.Partition) + "/" + en.ID
	}
	return out
}

// TestFindEntriesPages reads the whole fixture page by page: newest first over partitions,
// equal ids in partition order, no entry twice or lost across pages.
func TestFindEntriesPages(t *testing.T) {
	e := findFixture(t)
	var got []string
	var after *admin.Cursor
	for range 10 {
		page, err := e.adm.FindEntries(e.ctx, "find", admin.EntryQuery{Limit: 3, After: after})
		require.NoError(t, err)
		got = append(got, refsOf(page.Entries)...)
		if after = page.Next; after == nil {
			break
		}
	}
	want := []string{"0/5000-0", "2/5000-0"}
	for k := 4; k >= 1; k-- {
		for p := 0; p < 3; p++ {
			want = append(want, strconv.Itoa(p)+"/"+strconv.Itoa(1000+10*k)+"-"+strconv.Itoa(p))
		}
	}
	// Within one millisecond the higher sequence is newer: 1040-2 before 1040-1 before 1040-0.
	for i := 2; i < len(want); i += 3 {
		want[i], want[i+2] = want[i+2], want[i]
	}
	assert.Equal(t, want, got)
}

// TestFindEntriesFilters: partition, id range, time range, key, UUID and search each narrow
// the page; a scan limit stops early and says so.
func TestFindEntriesFilters(t *testing.T) {
	e := findFixture(t)
	tests := []struct {
		name string
		q    admin.EntryQuery
		want []string
	}{
		{"partition", admin.EntryQuery{Partitions: []int{1}, Limit: 2}, []string{"1/1040-1", "1/1030-1"}},
		{"id range", admin.EntryQuery{From: "1020-0", To: "1030-1"}, []string{"1/1030-1", "0/1030-0", "2/1020-2", "1/1020-1", "0/1020-0"}},
		{"millisecond bounds", admin.EntryQuery{From: "1030", To: "1030", Partitions: []int{0, 2}}, []string{"2/1030-2", "0/1030-0"}},
		{"uuid", admin.EntryQuery{UUID: "u-2-3"}, []string{"2/1030-2"}},
		{"search in metadata, any case", admin.EntryQuery{Search: "TIE-"}, []string{"0/5000-0", "2/5000-0"}},
		{"search in payload", admin.EntryQuery{Search: "payload of u-1-1"}, []string{"1/1010-1"}},
		{"nothing", admin.EntryQuery{UUID: "none"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := e.adm.FindEntries(e.ctx, "find", tt.q)
			require.NoError(t, err)
			assert.Equal(t, tt.want, refsOf(page.Entries))
		})
	}
	page, err := e.adm.FindEntries(e.ctx, "find", admin.EntryQuery{UUID: "u-0-1", ScanLimit: 4})
	require.NoError(t, err)
	assert.Empty(t, page.Entries)
	assert.True(t, page.Truncated)
	assert.Equal(t, 4, page.Scanned)
	require.NotNil(t, page.Next)
	page, err = e.adm.FindEntries(e.ctx, "find", admin.EntryQuery{UUID: "u-0-1", After: page.Next})
	require.NoError(t, err)
	assert.Equal(t, []string{"0/1010-0"}, refsOf(page.Entries), "the next page goes on where the scan stopped")

	_, err = e.adm.FindEntries(e.ctx, "find", admin.EntryQuery{Partitions: []int{3}})
	assert.True(t, errors.Is(err, admin.ErrInvalidArgument), "partition out of range")
	_, err = e.adm.FindEntries(e.ctx, "find", admin.EntryQuery{From: "x"})
	assert.True(t, errors.Is(err, admin.ErrInvalidArgument), "bad id")
	_, err = admin.ParseCursor("1/nope")
	assert.True(t, errors.Is(err, admin.ErrInvalidArgument))
	c, err := admin.ParseCursor("2/5000-0")
	require.NoError(t, err)
	assert.Equal(t, "2/5000-0", c.String())
}

// TestFindDeadLetters filters dead letters by group, reason, partition, search and time,
// pages through them, and reports replay marks.
func TestFindDeadLetters(t *testing.T) {
	e := newOpEnv(t)
	e.create("dl", 2)
	add := func(p int, group, reason, payload string) admin.DeadLetter {
		d, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "dl", Partition: p, Group: group, Reason: reason, Payload: []byte(payload)})
		require.NoError(t, err)
		return d
	}
	a := add(0, "billing", "card declined", `{"order":1}`)
	b := add(1, "billing", "timeout", `{"order":2}`)
	c := add(1, "audit", "Card expired", `{"order":3}`)
	_, err := e.adm.ReplayDeadLetter(e.ctx, "dl", 1, b.ID, admin.ReplayOptions{})
	require.NoError(t, err)
	ref := func(d admin.DeadLetter) string { return strconv.Itoa(d.Partition) + "/" + d.ID }
	ids := func(page admin.DLQPage) []string {
		out := []string{}
		for _, d := range page.Letters {
			out = append(out, ref(d))
		}
		return out
	}
	// order lists letters as the pages do: ids newest first, equal ids in partition order
	// (two partitions' DLQs may hand out the same id).
	order := func(ls ...admin.DeadLetter) []string {
		slices.SortFunc(ls, func(x, y admin.DeadLetter) int {
			if x.ID != y.ID {
				return -strings.Compare(pad(x.ID), pad(y.ID))
			}
			return x.Partition - y.Partition
		})
		out := []string{}
		for _, d := range ls {
			out = append(out, ref(d))
		}
		return out
	}
	tests := []struct {
		name string
		q    admin.DLQQuery
		want []string
	}{
		{"all, newest first", admin.DLQQuery{}, order(a, b, c)},
		{"group", admin.DLQQuery{Group: "billing"}, order(a, b)},
		{"reason, any case", admin.DLQQuery{Reason: "card"}, order(a, c)},
		{"partition", admin.DLQQuery{Partitions: []int{0}}, order(a)},
		{"search in payload", admin.DLQQuery{Search: `"order":2`}, order(b)},
		{"until before the first", admin.DLQQuery{Until: a.FailedAt.Add(-time.Hour)}, []string{}},
		{"since the first", admin.DLQQuery{Since: a.FailedAt.Add(-time.Second)}, order(a, b, c)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := e.adm.FindDeadLetters(e.ctx, "dl", tt.q)
			require.NoError(t, err)
			assert.Equal(t, tt.want, ids(page))
		})
	}
	first, err := e.adm.FindDeadLetters(e.ctx, "dl", admin.DLQQuery{Limit: 2})
	require.NoError(t, err)
	require.NotNil(t, first.Next)
	second, err := e.adm.FindDeadLetters(e.ctx, "dl", admin.DLQQuery{Limit: 2, After: first.Next})
	require.NoError(t, err)
	assert.Equal(t, order(a, b, c), append(ids(first), ids(second)...), "two pages hold every letter once")
	for _, d := range append(first.Letters, second.Letters...) {
		if d.ID == b.ID && d.Partition == b.Partition {
			assert.False(t, d.ReplayedAt.IsZero(), "the replayed letter is marked")
			assert.NotEmpty(t, d.ReplayedAs)
		} else {
			assert.True(t, d.ReplayedAt.IsZero(), "%s was never replayed", ref(d))
		}
	}
}

// pad makes stream ids compare as text in id order.
func pad(id string) string {
	ms, seq, _ := strings.Cut(id, "-")
	return strings.Repeat("0", 20-len(ms)) + ms + "-" + strings.Repeat("0", 20-len(seq)) + seq
}
