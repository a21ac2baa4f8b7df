package dashboard_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/dashboard"
)

type dlqReasonsJSON struct {
	By      string `json:"by"`
	Letters int64  `json:"letters"`
	Keys    int    `json:"keys"`
	Others  int64  `json:"others"`
	Counts  []struct {
		Key     string  `json:"key"`
		Letters int64   `json:"letters"`
		Oldest  *string `json:"oldest"`
		Newest  *string `json:"newest"`
	} `json:"counts"`
}

// TestDLQReasons: GET .../dlq/reasons counts the dead letters by reason, largest first, the
// top 5 by default and the rest in others; under the list's filters; by group; a bad "by"
// is a 400.
func TestDLQReasons(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.adm.CreateTopic(e.ctx, "payments", 2))
	reasons := []struct {
		reason string
		n      int
	}{{"card declined", 30}, {"gateway timeout", 20}, {"malformed entry: missing payload", 5}, {"customer unknown", 2},
		{"currency not supported", 1}, {"duplicate order", 1}}
	i := 0
	for _, r := range reasons {
		for range r.n {
			group := "workers"
			if i%2 == 1 {
				group = "audit"
			}
			_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: "payments", Partition: i % 2, Group: group,
				Reason: r.reason, Payload: []byte(strconv.Itoa(i))})
			require.NoError(t, err)
			i++
		}
	}
	s := e.serve(dashboard.Options{})

	var v dlqReasonsJSON
	s.getJSON("/api/topics/payments/dlq/reasons", &v)
	assert.Equal(t, "reason", v.By)
	assert.Equal(t, int64(59), v.Letters)
	assert.Equal(t, 6, v.Keys)
	assert.Equal(t, int64(1), v.Others, "the sixth reason")
	require.Len(t, v.Counts, 5)
	for j, r := range reasons[:4] {
		assert.Equal(t, r.reason, v.Counts[j].Key)
		assert.Equal(t, int64(r.n), v.Counts[j].Letters)
		require.NotNil(t, v.Counts[j].Newest)
	}

	s.getJSON("/api/topics/payments/dlq/reasons?group=workers&reason=DECLINED&top=10", &v)
	require.Len(t, v.Counts, 1)
	assert.Equal(t, dlqCount("card declined", 15), dlqCount(v.Counts[0].Key, v.Counts[0].Letters))

	s.getJSON("/api/topics/payments/dlq/reasons?by=group&partition=1", &v)
	require.Len(t, v.Counts, 1, "partition 1 holds audit's letters")
	assert.Equal(t, "audit", v.Counts[0].Key)

	r := s.get("/api/topics/payments/dlq/reasons?by=uuid")
	assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	r = s.get("/api/topics/missing/dlq/reasons")
	assert.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
}

type keyCount struct {
	key string
	n   int64
}

func dlqCount(key string, n int64) keyCount { return keyCount{key, n} }
