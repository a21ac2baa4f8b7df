package dashboard_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/dashboard"
)

type deadLetterJSON struct {
	Partition         int               `json:"partition"`
	ID                string            `json:"id"`
	UUID              string            `json:"uuid"`
	Reason            string            `json:"reason"`
	Group             string            `json:"group"`
	RetryCount        int               `json:"retryCount"`
	MaxRetries        int               `json:"maxRetries"`
	OriginalStreamID  string            `json:"originalStreamId"`
	FailedAt          *string           `json:"failedAt"`
	Metadata          map[string]string `json:"metadata"`
	OriginalMessageID string            `json:"originalMessageId"`
	Payload           struct {
		Size      int    `json:"size"`
		Encoding  string `json:"encoding"`
		Preview   string `json:"preview"`
		Truncated bool   `json:"truncated"`
	} `json:"payload"`
	Data         string `json:"data"`
	DataEncoding string `json:"dataEncoding"`
}

type dlqJSON struct {
	Topic   string           `json:"topic"`
	Size    int64            `json:"size"`
	Entries []deadLetterJSON `json:"entries"`
	Next    string           `json:"next"`
}

const (
	scriptPayload = `<script>window.__xss = 1</script>`
	imgReason     = `bad <img src=x onerror="window.__xss=2"> order`
)

var binaryPayload = []byte{0x00, 0x01, 0xfe, 0xff, 'a', 'b', 0x1b, '[', '3', '1', 'm'}

// dlqFixture dead-letters three messages of topic "payments" (4 partitions): a payload with
// a script tag on partition 2, a binary payload on partition 1, a 5000-byte payload on
// partition 3.
func dlqFixture(t *testing.T) *env {
	e := newEnv(t)
	e.deadLetter("payments", 4, 3,
		deadMsg([]byte(scriptPayload), imgReason, 2),
		deadMsg(binaryPayload, "binary", 1),
		deadMsg(bytes.Repeat([]byte("é"), 2500), "large", 3),
	)
	return e
}

// byPartition indexes dead letters by partition.
func byPartition(entries []deadLetterJSON) map[int]deadLetterJSON {
	out := map[int]deadLetterJSON{}
	for _, d := range entries {
		out[d.Partition] = d
	}
	return out
}

func TestDLQReads(t *testing.T) {
	e := dlqFixture(t)
	s := e.serve(dashboard.Options{})

	var topics struct {
		Topics []struct {
			Topic string `json:"topic"`
			Size  int64  `json:"size"`
		} `json:"topics"`
	}
	s.getJSON("/api/dlq", &topics)
	require.Len(t, topics.Topics, 1)
	assert.Equal(t, "payments", topics.Topics[0].Topic)
	assert.Equal(t, int64(3), topics.Topics[0].Size)

	r := s.get("/api/topics/payments/dlq")
	require.Equal(t, http.StatusOK, r.status)
	assert.False(t, bytes.Contains(r.body, []byte("<script")), "markup is escaped in JSON: %s", r.body)
	assert.False(t, bytes.Contains(r.body, []byte("<img")))
	var list dlqJSON
	r.json(t, &list)
	assert.Equal(t, int64(3), list.Size)
	require.Len(t, list.Entries, 3)
	got := byPartition(list.Entries)

	script := got[2]
	assert.Equal(t, imgReason, script.Reason)
	assert.Equal(t, "workers", script.Group)
	assert.Equal(t, "text", script.Payload.Encoding)
	assert.Equal(t, scriptPayload, script.Payload.Preview)
	assert.Equal(t, len(scriptPayload), script.Payload.Size)
	assert.False(t, script.Payload.Truncated)
	assert.NotNil(t, script.FailedAt)
	assert.NotEmpty(t, script.OriginalStreamID)
	assert.Equal(t, imgReason, script.Metadata["reason"])

	bin := got[1]
	assert.Equal(t, "hex", bin.Payload.Encoding)
	assert.Equal(t, "00000000  00 01 fe ff 61 62 1b 5b  |....ab.[|\n00000008  33 31 6d                 |31m|\n", bin.Payload.Preview)
	assert.Equal(t, len(binaryPayload), bin.Payload.Size)

	large := got[3]
	assert.Equal(t, "text", large.Payload.Encoding)
	assert.Equal(t, 5000, large.Payload.Size)
	assert.True(t, large.Payload.Truncated)
	assert.Equal(t, strings.Repeat("é", 512), large.Payload.Preview, "cut at 1024 bytes on a rune boundary")

	var detail deadLetterJSON
	s.getJSON("/api/topics/payments/dlq/1/"+bin.ID, &detail)
	assert.Equal(t, "base64", detail.DataEncoding)
	assert.Equal(t, base64.StdEncoding.EncodeToString(binaryPayload), detail.Data)
	assert.Equal(t, bin.UUID, detail.UUID)
	s.getJSON("/api/topics/payments/dlq/3/"+large.ID, &detail)
	assert.Equal(t, "utf8", detail.DataEncoding)
	assert.Equal(t, strings.Repeat("é", 2500), detail.Data, "the detail has the whole payload")

	var limited dlqJSON
	s.getJSON("/api/topics/payments/dlq?limit=1", &limited)
	assert.Len(t, limited.Entries, 1)
	assert.Equal(t, int64(3), limited.Size)
}

func TestDLQWrites(t *testing.T) {
	e := dlqFixture(t)
	s := e.serve(dashboard.Options{AllowWrites: true})
	var list dlqJSON
	s.getJSON("/api/topics/payments/dlq", &list)
	got := byPartition(list.Entries)

	// Replay one: it is appended to its original partition, and the dead letter stays.
	var res struct {
		Done    int `json:"done"`
		Results []struct {
			Partition int    `json:"partition"`
			ID        string `json:"id"`
			NewID     string `json:"newId"`
			Error     string `json:"error"`
		} `json:"results"`
	}
	r := s.write("/api/topics/payments/dlq/replay", map[string]any{"entries": []map[string]any{{"partition": 2, "id": got[2].ID}}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	require.Equal(t, 1, res.Done)
	require.NotEmpty(t, res.Results[0].NewID)
	replayed, err := e.adm.Range(e.ctx, "payments", 2, res.Results[0].NewID, res.Results[0].NewID, 1)
	require.NoError(t, err)
	require.Len(t, replayed, 1, "the replay landed on partition 2")
	assert.Equal(t, scriptPayload, string(replayed[0].Payload))
	assert.Equal(t, got[2].ID, replayed[0].Metadata[streamq.ReplayedFromMetadata])
	assert.Equal(t, int64(3), dlqSize(t, e))

	// A stale id is reported per entry; the others still run. Delete removes them.
	r = s.write("/api/topics/payments/dlq/replay", map[string]any{"delete": true, "entries": []map[string]any{
		{"partition": 1, "id": "1-1"}, {"partition": 1, "id": got[1].ID},
	}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	assert.Equal(t, 1, res.Done)
	assert.NotEmpty(t, res.Results[0].Error)
	assert.Empty(t, res.Results[1].Error)
	assert.Equal(t, int64(2), dlqSize(t, e))

	r = s.write("/api/topics/payments/dlq/delete", map[string]any{"entries": []map[string]any{{"partition": 3, "id": got[3].ID}, {"partition": 3, "id": got[3].ID}}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	assert.Equal(t, 1, res.Done)
	assert.Equal(t, "dead letter not found", res.Results[1].Error)
	assert.Equal(t, int64(1), dlqSize(t, e))

	assert.Equal(t, http.StatusBadRequest, s.write("/api/topics/payments/dlq/delete", map[string]any{"entries": []any{}}).status)
	assert.Equal(t, http.StatusBadRequest, s.write("/api/topics/payments/dlq/delete", map[string]any{"nope": 1}).status)
	assert.Equal(t, http.StatusNotFound, s.write("/api/topics/nope/dlq/replay", map[string]any{"entries": []map[string]any{{"partition": 0, "id": "1-1"}}}).status)

	// Replay all (filtered by group), then clear.
	var count struct {
		Replayed *int   `json:"replayed"`
		Removed  *int64 `json:"removed"`
	}
	r = s.write("/api/topics/payments/dlq/replay-all", map[string]any{"group": "someone-else"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &count)
	assert.Equal(t, 0, *count.Replayed)
	r = s.write("/api/topics/payments/dlq/replay-all", map[string]any{"group": "workers", "reasonContains": "onerror", "dryRun": true})
	r.json(t, &count)
	assert.Equal(t, 0, *count.Replayed, "replayed before: skipped")
	assert.Len(t, e.ids("payments", 2), 2, "a dry run appends nothing")
	r = s.write("/api/topics/payments/dlq/replay-all", map[string]any{"group": "workers", "reasonContains": "onerror", "again": true})
	r.json(t, &count)
	assert.Equal(t, 1, *count.Replayed)
	assert.Len(t, e.ids("payments", 2), 3, "original, first replay, replay-all")
	r = s.write("/api/topics/payments/dlq/clear", map[string]any{})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &count)
	assert.Equal(t, int64(1), *count.Removed)
	assert.Equal(t, int64(0), dlqSize(t, e))
}

func TestResetOffset(t *testing.T) {
	e, ids := topicFixture(t)
	s := e.serve(dashboard.Options{AllowWrites: true})
	var res struct {
		Partitions  int    `json:"partitions"`
		PendingKept bool   `json:"pendingKept"`
		Note        string `json:"note"`
	}
	r := s.write("/api/topics/orders/groups/g/reset-offset", map[string]string{"to": "latest"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	assert.Equal(t, 4, res.Partitions)
	assert.True(t, res.PendingKept)
	assert.Contains(t, res.Note, "latest")
	st, err := e.adm.GroupStats(e.ctx, "orders", "g")
	require.NoError(t, err)
	assert.Equal(t, int64(0), st.Lag)
	assert.Equal(t, ids[3][len(ids[3])-1], st.Partitions[3].LastDeliveredID)

	r = s.write("/api/topics/orders/groups/g/reset-offset", map[string]string{"to": ids[1][2]})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	st, err = e.adm.GroupStats(e.ctx, "orders", "g")
	require.NoError(t, err)
	assert.Equal(t, int64(len(ids[1])-3), st.Partitions[1].Lag)

	assert.Equal(t, http.StatusBadRequest, s.write("/api/topics/orders/groups/g/reset-offset", map[string]string{"to": "yesterday"}).status)
	assert.Equal(t, http.StatusNotFound, s.write("/api/topics/orders/groups/nope/reset-offset", map[string]string{"to": "latest"}).status)
}

// TestPauseAndResumeGroup pauses and resumes a group through the API and reads the state
// back from the group view.
func TestPauseAndResumeGroup(t *testing.T) {
	e, _ := topicFixture(t)
	s := e.serve(dashboard.Options{AllowWrites: true})
	var res struct {
		Paused   bool   `json:"paused"`
		PausedAt string `json:"pausedAt"`
		Changed  bool   `json:"changed"`
	}
	r := s.write("/api/topics/orders/groups/g/pause", map[string]any{})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	assert.True(t, res.Paused && res.Changed)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, res.PausedAt, "RFC 3339 UTC with milliseconds, as every API time")
	var group struct {
		Paused   bool   `json:"paused"`
		PausedAt string `json:"pausedAt"`
	}
	s.get("/api/topics/orders/groups/g").json(t, &group)
	assert.True(t, group.Paused)
	assert.Equal(t, res.PausedAt, group.PausedAt)

	r = s.write("/api/topics/orders/groups/g/resume", map[string]any{})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.json(t, &res)
	assert.True(t, res.Changed)
	assert.False(t, res.Paused)
	p, err := e.adm.GroupPause(e.ctx, "orders", "g")
	require.NoError(t, err)
	assert.False(t, p.Paused)
	assert.Equal(t, http.StatusNotFound, s.write("/api/topics/orders/groups/nope/pause", map[string]any{}).status)
}

func dlqSize(t *testing.T, e *env) int64 {
	t.Helper()
	n, err := e.adm.DLQSize(e.ctx, "payments")
	require.NoError(t, err)
	return n
}
