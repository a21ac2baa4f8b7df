package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
)

// nightReasons are the five reasons of the night shift's 882 dead letters, with how many
// letters each; the malformed ones have no group.
var nightReasons = []struct {
	reason string
	n      int
}{
	{"retries exhausted (3): payments: 503 Service Unavailable", 500},
	{"retries exhausted (3): card declined", 250},
	{"malformed entry: missing payload", 100},
	{"retries exhausted (3): ledger: context deadline exceeded", 30},
	{"dead-lettered: customer unknown", 2},
}

// nightDLQ writes the night's 882 dead letters to topic's 3 partitions.
func (e *cliEnv) nightDLQ(topic string) {
	e.t.Helper()
	require.NoError(e.t, e.adm.CreateTopic(e.ctx, topic, 3))
	i := 0
	base := time.Now().Add(-time.Hour)
	for _, r := range nightReasons {
		group := "payments"
		if strings.HasPrefix(r.reason, "malformed") {
			group = ""
		}
		for range r.n {
			_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Partition: i % 3, Reason: r.reason, Group: group,
				Payload: []byte(`{"order":` + strconv.Itoa(i) + `}`), FailedAt: base.Add(time.Duration(i) * time.Second)})
			require.NoError(e.t, err)
			i++
		}
	}
}

// TestCLIDLQCountByReason: "dlq list --count-by reason" shows the night's 882 dead letters as
// their 5 reasons, largest first, and what they add up to, in 80 columns without a terminal;
// as JSON; by group; with the list's filters; --limit leaves the smallest out and says so.
// A list cut by --limit says on stderr how to count them all.
func TestCLIDLQCountByReason(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic = "night"
	e.nightDLQ(topic)

	out := e.ok("dlq", "list", topic, "--count-by", "reason")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	assert.Regexp(t, `^LETTERS +NEWEST FAILURE +REASON$`, lines[0])
	assert.Equal(t, "882 dead letters, 5 reasons", lines[len(lines)-1])
	var counts []string
	for _, l := range lines[1 : len(lines)-1] {
		if f := strings.Fields(l); len(f) > 0 && l[0] != ' ' {
			counts = append(counts, f[0])
		}
	}
	assert.Equal(t, []string{"500", "250", "100", "30", "2"}, counts, "one row per reason, largest first:\n%s", out)
	flat := strings.Join(strings.Fields(out), " ")
	for _, r := range nightReasons {
		assert.Contains(t, flat, r.reason)
	}
	for _, l := range lines {
		assert.LessOrEqual(t, len([]rune(l)), tableWidth, "line %q", l)
	}

	var v dlqCountsView
	e.jsonOf(&v, "dlq", "list", topic, "--count-by", "reason")
	assert.Equal(t, "reason", v.By)
	assert.Equal(t, int64(882), v.Letters)
	require.Len(t, v.Counts, 5)
	for i, r := range nightReasons {
		assert.Equal(t, r.reason, v.Counts[i].Key)
		assert.Equal(t, int64(r.n), v.Counts[i].Letters)
		assert.False(t, time.Time(v.Counts[i].Newest).Before(time.Time(v.Counts[i].Oldest)))
	}

	groups := e.ok("dlq", "list", topic, "--count-by", "group")
	assert.Regexp(t, `(?m)^782 +\S+ \S+ \S+ +payments$`, groups)
	assert.Regexp(t, `(?m)^100 +\S+ \S+ \S+ +\(none\)$`, groups)

	e.jsonOf(&v, "dlq", "list", topic, "--count-by", "reason", "--group", "payments", "--reason-contains", "exhausted", "--partition", "1")
	assert.Equal(t, int64(260), v.Letters, "a third of the 780 exhausted letters of payments")
	assert.Equal(t, 3, v.Keys)

	top := e.ok("dlq", "list", topic, "--count-by", "reason", "-n", "2")
	assert.Contains(t, top, "882 dead letters, 5 reasons; 3 more reasons with 132 letters not shown (--limit)")
	assert.NotContains(t, top, "customer unknown")

	r := e.run("dlq", "list", topic, "--count-by", "uuid")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--count-by takes reason, group or partition")

	r = e.run("dlq", "list", topic)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `100 of the 882 dead letters of "night" shown (--limit); "streamq dlq list night --count-by reason" counts them all by reason`)
}

// TestRetriesDocOutput runs the commands of docs/retries-and-dlq.md's console blocks on the
// night's 882 dead letters of topic "orders" and compares their output, times aside.
// STREAMQ_UPDATE_DOCS=1 writes this run's output into the page instead.
func TestRetriesDocOutput(t *testing.T) {
	t.Parallel()
	const page = "../../docs/retries-and-dlq.md"
	lines, blocks := readDocPage(t, page)
	require.NotEmpty(t, blocks, "docs/retries-and-dlq.md has no console block")
	e := newCLIEnv(t)
	e.nightDLQ("orders")
	checkDocOutputs(t, page, lines, blocks, operationsNormal, func(int) *cliEnv { return e })
}
