package dashboard_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
)

type browseJSON struct {
	Entries []struct {
		Partition int    `json:"partition"`
		ID        string `json:"id"`
		UUID      string `json:"uuid"`
		Payload   struct {
			Preview string `json:"preview"`
		} `json:"payload"`
	} `json:"entries"`
	Next      string `json:"next"`
	Scanned   int    `json:"scanned"`
	Truncated bool   `json:"truncated"`
}

// TestBrowseMessages pages through "orders" with the message browser's parameters: every
// entry once over pages, then a partition, an id range, a UUID and a payload search.
func TestBrowseMessages(t *testing.T) {
	e, ids := topicFixture(t)
	s := e.serve(dashboard.Options{HistoryInterval: -1})
	seen := map[string]bool{}
	after := ""
	for range 10 {
		var page browseJSON
		s.getJSON("/api/topics/orders/messages?browse=1&limit=7&after="+after, &page)
		for _, en := range page.Entries {
			seen[en.ID+"@"+strconv.Itoa(en.Partition)] = true
		}
		if after = page.Next; after == "" {
			break
		}
	}
	assert.Len(t, seen, 30, "every entry once over the pages")

	var page browseJSON
	s.getJSON("/api/topics/orders/messages?partition=1&browse=1", &page)
	require.Len(t, page.Entries, len(ids[1]))
	assert.Equal(t, ids[1][len(ids[1])-1], page.Entries[0].ID, "newest first")

	s.getJSON("/api/topics/orders/messages?partition=2&from="+ids[2][1]+"&to="+ids[2][3], &page)
	require.Len(t, page.Entries, 3)
	assert.Equal(t, ids[2][3], page.Entries[0].ID)
	uuid := page.Entries[1].UUID

	s.getJSON("/api/topics/orders/messages?uuid="+uuid, &page)
	require.Len(t, page.Entries, 1)
	assert.Equal(t, ids[2][2], page.Entries[0].ID)

	s.getJSON("/api/topics/orders/messages?q=M17", &page)
	require.Len(t, page.Entries, 1, "m17, case ignored")
	assert.Equal(t, "m17", page.Entries[0].Payload.Preview)

	assert.Equal(t, http.StatusBadRequest, s.get("/api/topics/orders/messages?from=yesterday").status)
	assert.Equal(t, http.StatusBadRequest, s.get("/api/topics/orders/messages?after=nope").status)
}

// TestDLQFilters filters the dead letters by reason, partition and search, and pages them.
func TestDLQFilters(t *testing.T) {
	e := dlqFixture(t)
	s := e.serve(dashboard.Options{HistoryInterval: -1})
	var list dlqJSON
	s.getJSON("/api/topics/payments/dlq?reason=BINARY", &list)
	require.Len(t, list.Entries, 1)
	assert.Equal(t, 1, list.Entries[0].Partition)
	assert.Equal(t, int64(3), list.Size, "the size is unfiltered")

	s.getJSON("/api/topics/payments/dlq?partition=2,3", &list)
	assert.Len(t, list.Entries, 2)
	s.getJSON("/api/topics/payments/dlq?q=%C3%A9%C3%A9%C3%A9", &list)
	require.Len(t, list.Entries, 1, "search in the payload")
	assert.Equal(t, 3, list.Entries[0].Partition)
	s.getJSON("/api/topics/payments/dlq?group=nobody", &list)
	assert.Empty(t, list.Entries)
	s.getJSON("/api/topics/payments/dlq?until=@1", &list)
	assert.Empty(t, list.Entries, "nothing failed in 1970")

	var first, second dlqJSON
	s.getJSON("/api/topics/payments/dlq?limit=2", &first)
	require.Len(t, first.Entries, 2)
	require.NotEmpty(t, first.Next)
	s.getJSON("/api/topics/payments/dlq?limit=2&after="+first.Next, &second)
	require.Len(t, second.Entries, 1)
	assert.Empty(t, second.Next)
	assert.Equal(t, http.StatusBadRequest, s.get("/api/topics/payments/dlq?since=noon").status)
}

// TestResetPreview previews a reset of group g (8 delivered on partition 0) and idle
// (nothing delivered) without moving them.
func TestResetPreview(t *testing.T) {
	e, ids := topicFixture(t)
	s := e.serve(dashboard.Options{HistoryInterval: -1})
	var pv struct {
		To         string `json:"to"`
		Skip       int64  `json:"skip"`
		Redeliver  int64  `json:"redeliver"`
		Exact      bool   `json:"exact"`
		Pending    int64  `json:"pending"`
		Partitions []struct {
			Partition int   `json:"partition"`
			Skip      int64 `json:"skip"`
			Redeliver int64 `json:"redeliver"`
		} `json:"partitions"`
	}
	s.getJSON("/api/topics/orders/groups/idle/reset-preview?to=latest", &pv)
	assert.Equal(t, "latest", pv.To)
	assert.Equal(t, int64(30), pv.Skip)
	assert.True(t, pv.Exact)
	require.Len(t, pv.Partitions, 4)
	for p, pp := range pv.Partitions {
		assert.Equal(t, int64(len(ids[p])), pp.Skip)
	}
	s.getJSON("/api/topics/orders/groups/g/reset-preview?to=beginning", &pv)
	assert.Equal(t, int64(8), pv.Redeliver)
	assert.Equal(t, int64(8), pv.Pending)
	assert.Equal(t, int64(8), pv.Partitions[0].Redeliver)
	assert.Equal(t, http.StatusBadRequest, s.get("/api/topics/orders/groups/g/reset-preview").status, "no pre-filled choice")
	assert.Equal(t, http.StatusNotFound, s.get("/api/topics/orders/groups/nope/reset-preview?to=latest").status)
}
