package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/dashboard"
)

// replayResultJSON is the answer of POST .../dlq/replay.
type replayResultJSON struct {
	Done    int `json:"done"`
	Skipped int `json:"skipped"`
	Results []struct {
		ID                string  `json:"id"`
		NewID             string  `json:"newId"`
		Error             string  `json:"error"`
		AlreadyReplayedAt *string `json:"alreadyReplayedAt"`
		AlreadyReplayedAs string  `json:"alreadyReplayedAs"`
		Notice            string  `json:"notice"`
	} `json:"results"`
}

// TestDLQReplayOnce: a replay of a dead letter replayed before does nothing and answers when
// and as which entry it was replayed; "again" replays it again.
func TestDLQReplayOnce(t *testing.T) {
	e := dlqFixture(t)
	s := e.serve(dashboard.Options{AllowWrites: true})
	var list dlqJSON
	s.getJSON("/api/topics/payments/dlq", &list)
	d := byPartition(list.Entries)[2]
	replay := func(body map[string]any) replayResultJSON {
		t.Helper()
		body["entries"] = []map[string]any{{"partition": 2, "id": d.ID}}
		r := s.write("/api/topics/payments/dlq/replay", body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var res replayResultJSON
		r.json(t, &res)
		require.Len(t, res.Results, 1)
		return res
	}

	first := replay(map[string]any{})
	require.Equal(t, 1, first.Done)
	newID := first.Results[0].NewID
	require.NotEmpty(t, newID)
	assert.Nil(t, first.Results[0].AlreadyReplayedAt)
	before := len(e.ids("payments", 2))

	for _, body := range []map[string]any{{}, {"delete": true}} {
		res := replay(body)
		assert.Equal(t, 0, res.Done)
		assert.Equal(t, 1, res.Skipped)
		got := res.Results[0]
		assert.Empty(t, got.Error)
		assert.Empty(t, got.NewID)
		assert.Equal(t, newID, got.AlreadyReplayedAs)
		require.NotNil(t, got.AlreadyReplayedAt)
		assert.Regexp(t, `^already replayed at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC as `+newID+`: nothing replayed`, got.Notice)
	}
	assert.Len(t, e.ids("payments", 2), before, "nothing appended")
	assert.Equal(t, int64(3), dlqSize(t, e), "the letter stays")

	again := replay(map[string]any{"again": true})
	assert.Equal(t, 1, again.Done)
	assert.Equal(t, 0, again.Skipped)
	assert.NotEqual(t, newID, again.Results[0].NewID)
	assert.Len(t, e.ids("payments", 2), before+1)
}
