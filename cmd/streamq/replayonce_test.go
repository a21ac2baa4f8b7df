package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLIReplayAllOnce: a dry run lists what would be replayed and changes nothing;
// replay-all run twice replays each dead letter once, --again replays them again, and
// "dlq list" shows the mark.
func TestCLIReplayAllOnce(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()
	length := func() int64 {
		var n int64
		for p := 0; p < 2; p++ {
			c, err := e.client.XLen(context.Background(), "stream:topic:{"+failing+":p:"+string(rune('0'+p))+"}").Result()
			require.NoError(t, err)
			n += c
		}
		return n
	}
	before := length()
	out := e.ok("dlq", "replay-all", failing, "--dry-run")
	assert.Contains(t, out, "would replay 3 dead letters")
	assert.Equal(t, before, length(), "a dry run appends nothing")
	var dry replayAllView
	e.jsonOf(&dry, "dlq", "replay-all", failing, "--dry-run")
	assert.True(t, dry.DryRun)
	assert.Len(t, dry.Letters, 3)

	assert.Contains(t, e.ok("dlq", "replay-all", failing), "replayed 3 dead letters")
	assert.Equal(t, before+3, length())
	assert.Contains(t, e.ok("dlq", "replay-all", failing), "replayed 0 dead letters", "replayed before: skipped")
	assert.Contains(t, e.ok("dlq", "replay-all", failing, "--dry-run"), "would replay 0 dead letters")
	assert.Contains(t, e.ok("dlq", "replay-all", failing, "--again"), "replayed 3 dead letters")
	assert.Equal(t, before+6, length())

	var letters []deadLetterView
	e.jsonOf(&letters, "dlq", "list", failing)
	require.Len(t, letters, 3)
	for _, l := range letters {
		assert.NotNil(t, l.ReplayedAt, "letter %s has no replay mark", l.ID)
		assert.NotEmpty(t, l.ReplayedAs)
	}
	assert.Contains(t, e.ok("dlq", "list", failing, "-o", "wide"), "REPLAYED")
	assert.Contains(t, e.ok("dlq", "list", failing), "(replayed) ", "the narrow table marks the reason")
}

// TestCLIDLQFilters: dlq list and replay-all take the same filters.
func TestCLIDLQFilters(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()
	count := func(args ...string) int {
		var letters []deadLetterView
		e.jsonOf(&letters, append([]string{"dlq", "list", failing}, args...)...)
		return len(letters)
	}
	assert.Equal(t, 3, count())
	assert.Equal(t, 3, count("--group", workers))
	assert.Equal(t, 0, count("--group", "nobody"))
	assert.Equal(t, 2, count("--partition", "1"))
	assert.Equal(t, 3, count("--failed-within", "1h"))
	assert.Equal(t, 0, count("--failed-before", "1h"))
	assert.Contains(t, e.ok("dlq", "replay-all", failing, "--partition", "0", "--dry-run"), "would replay 1 dead letter")
	assert.Contains(t, e.ok("dlq", "list", failing, "--group", "nobody"), `has no dead letters (only those of group "nobody")`)
	r := e.run("dlq", "list", failing, "--failed-within", "-1h")
	assert.Equal(t, 2, r.code, "%s", r.stderr)
}

// TestCLIReplayOnce: "dlq replay" of a dead letter replayed before replays nothing, says when
// and as which entry it was replayed, and exits 0; --again replays it again.
func TestCLIReplayOnce(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()
	var letters []deadLetterView
	e.jsonOf(&letters, "dlq", "list", failing)
	require.NotEmpty(t, letters)
	d := letters[0]
	part := strconv.Itoa(d.Partition)
	stream := "stream:topic:{" + failing + ":p:" + part + "}"
	length := func() int64 { return e.client.XLen(context.Background(), stream).Val() }

	var first replayView
	e.jsonOf(&first, "dlq", "replay", failing, part, d.ID)
	assert.True(t, first.Replayed)
	require.NotEmpty(t, first.NewID)
	before := length()

	out := e.ok("dlq", "replay", failing, part, d.ID)
	assert.Regexp(t, `^dead letter `+d.ID+` of "`+failing+`" partition `+part+` was already replayed at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ as `+
		first.NewID+`: nothing replayed \(--again replays it again\)\n$`, out)
	var again replayView
	e.jsonOf(&again, "dlq", "replay", failing, part, d.ID, "--delete")
	assert.False(t, again.Replayed)
	assert.Empty(t, again.NewID)
	assert.Equal(t, first.NewID, again.AlreadyReplayedAs)
	require.NotNil(t, again.AlreadyReplayedAt)
	assert.Equal(t, before, length(), "nothing appended")

	assert.Contains(t, e.ok("dlq", "replay", failing, part, d.ID, "--again"), "replayed dead letter "+d.ID)
	assert.Equal(t, before+1, length())
}
