package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redisstreamtest"
)

// oldOrders is a watermill-redisstream topic "legacy" before the switch: 60 messages over 5
// keys, 20 acked by group "payments", the rest pending or never delivered.
func (e *cliEnv) oldOrders() []redisstreamtest.Message {
	e.t.Helper()
	sent := redisstreamtest.Publish(e.t, e.client, "legacy", 0, 60, 5)
	return redisstreamtest.NotAcked(sent, redisstreamtest.Consume(e.t, e.client, "legacy", "payments", "old", 20))
}

// TestImportCommand: a dry run counts the 40 entries the old group had not acked and creates
// nothing; the import moves them into a 4-partition topic (JSON: the counts per partition);
// a second run appends nothing and says they were imported already.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	want := e.oldOrders()
	require.Len(t, want, 40)

	out := e.ok("import", "legacy", "--group", "payments", "--partitions", "4", "--dry-run")
	assert.Contains(t, out, `dry run: would import 40 entries of stream "legacy" group "payments" into topic "legacy" (4 partitions) for group "payments"`)
	assert.Contains(t, out, "PARTITION  ENTRIES")
	assert.Equal(t, exitNotFound, e.run("info", "legacy").code, "a dry run creates no topic")

	var v importView
	raw := e.jsonOf(&v, "import", "legacy", "--group", "payments", "--partitions", "4")
	requireKeys(t, raw, "stream", "group", "topic", "targetGroup", "source", "dryRun", "partitions", "pending",
		"undelivered", "imported", "byPartition", "skipped", "duplicates", "missing", "acked", "checkpoint", "lastId")
	assert.Equal(t, int64(40), v.Imported)
	assert.Equal(t, int64(40), v.Pending+v.Undelivered)
	assert.Positive(t, v.Pending, "the old subscriber left its last message pending")
	assert.Equal(t, "keep", v.Source)
	var sum int64
	for _, p := range v.ByPartition {
		sum += p.Imported
	}
	assert.Equal(t, int64(40), sum)
	assert.Equal(t, "streaming:mq:import:{legacy}:checkpoints", v.Checkpoint)

	var info struct {
		Length int64 `json:"length"`
	}
	e.jsonOf(&info, "info", "legacy")
	assert.Equal(t, int64(40), info.Length)

	out = e.ok("import", "legacy", "--group", "payments")
	assert.Contains(t, out, "imported 0 entries of stream")
	assert.Contains(t, out, "already imported: 40")
	e.jsonOf(&info, "info", "legacy")
	assert.Equal(t, int64(40), info.Length, "a second import appends nothing")
}

// TestImportCommandAckSource: --ack-source needs --yes without a terminal; with it the import
// acks what it moved for the old group, and a dry run then reports the group drained.
func TestImportCommandAckSource(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.oldOrders()
	r := e.run("import", "legacy", "legacy-v2", "--group", "payments", "--partitions", "2", "--ack-source")
	assert.Equal(t, exitUsage, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "pass --yes")

	out := e.ok("import", "legacy", "legacy-v2", "--group", "payments", "--partitions", "2", "--ack-source", "--yes")
	assert.Contains(t, out, "imported 40 entries")
	assert.Contains(t, out, "acked on the source: 40")
	var v importView
	e.jsonOf(&v, "import", "legacy", "legacy-v2", "--group", "payments", "--dry-run")
	assert.Zero(t, v.Pending+v.Undelivered, "drained: %+v", v)
}

// TestImportCommandErrors: bad arguments exit with the usage code, a missing stream or group
// with the not-found code, and say why.
func TestImportCommandErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.oldOrders()
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no stream", []string{"import"}, exitUsage, "missing argument STREAM"},
		{"three arguments", []string{"import", "a", "b", "c", "--group", "g"}, exitUsage, `unexpected argument "c"`},
		{"no group", []string{"import", "legacy"}, exitUsage, "--group is required"},
		{"two keys", []string{"import", "legacy", "-g", "payments", "--key-metadata", "a", "--key-field", "b"}, exitUsage, "not both"},
		{"new topic, no count", []string{"import", "legacy", "-g", "payments"}, exitUsage, "give its partition count"},
		{"negative window", []string{"import", "legacy", "-g", "payments", "--idempotency-window", "-1s"}, exitUsage, "must not be negative"},
		{"bad batch", []string{"import", "legacy", "-g", "payments", "--batch", "0"}, exitUsage, "--batch must be at least 1"},
		{"unknown stream", []string{"import", "nope", "-g", "payments", "--partitions", "1"}, exitNotFound, `stream "nope" does not exist`},
		{"unknown group", []string{"import", "legacy", "-g", "nope", "--partitions", "1"}, exitNotFound, `stream "legacy" has no group "nope"`},
	} {
		r := e.run(tc.args...)
		assert.Equal(t, tc.code, r.code, "%s: stdout:\n%s\nstderr:\n%s", tc.name, r.stdout, r.stderr)
		assert.Contains(t, r.stderr, tc.says, tc.name)
	}
	var v importView
	r := e.run("import", "legacy", "-g", "payments", "--partitions", "1", "--dry-run", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, int64(40), v.Imported, "nothing was imported by the refused runs")
}
