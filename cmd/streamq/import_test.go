package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redisstreamtest"
)

// oldOrders is a watermill-redisstream topic (stream) before the switch: 60 messages over 12
// keys, 20 acked by group "payments", the rest pending or never delivered.
func (e *cliEnv) oldOrders(stream string) []redisstreamtest.Message {
	e.t.Helper()
	sent := redisstreamtest.Publish(e.t, e.client, stream, 0, 60, 12)
	return redisstreamtest.NotAcked(sent, redisstreamtest.Consume(e.t, e.client, stream, "payments", "old", 20))
}

// TestImportCommand: a dry run counts the 40 entries the old group had not acked and creates
// nothing; the import moves them into a 4-partition topic (JSON: the counts per partition);
// a second run appends nothing and says they were imported already.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	want := e.oldOrders("legacy")
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
	e.oldOrders("legacy")
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
	e.oldOrders("legacy")
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

// docBlock is a console block of docs/migration.md: commands ("$ streamq ...") each followed
// by its output. at and end locate its lines in the page, indent is their indentation.
type docBlock struct {
	at, end int
	indent  string
	steps   []docStep
}

type docStep struct {
	args   []string
	output string
}

var consoleStart = regexp.MustCompile("^( *)```console$")

// docBlocks reads the console blocks of page.
func docBlocks(t *testing.T, lines []string) []docBlock {
	t.Helper()
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		m := consoleStart.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{at: i + 1, indent: m[1]}
		for i++; strings.TrimSpace(lines[i]) != "```"; i++ {
			line := strings.TrimPrefix(lines[i], b.indent)
			if cmd, ok := strings.CutPrefix(line, "$ streamq "); ok {
				b.steps = append(b.steps, docStep{args: strings.Fields(cmd)})
				continue
			}
			require.NotEmpty(t, b.steps, "output before a command in block at line %d", b.at)
			b.steps[len(b.steps)-1].output += line + "\n"
		}
		b.end = i
		blocks = append(blocks, b)
	}
	return blocks
}

// docVariable are what changes from one run to the next: stream ids, and how the backlog
// splits into pending and undelivered (watermill-redisstream reads ahead one or two).
var docVariable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{13}-\d+`), "<id>"},
	{regexp.MustCompile(`\d+ pending, \d+ undelivered`), "<n> pending, <m> undelivered"},
}

func docNormal(s string) string {
	for _, v := range docVariable {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// TestImportDocOutput runs the commands of docs/migration.md's console blocks and compares
// their output (stream ids and the pending/undelivered split aside). The first block is a
// drained old group; the others are the cut-over, in order, on the old topic of oldOrders.
// STREAMQ_UPDATE_DOCS=1 writes the output of this run into the page instead.
func TestImportDocOutput(t *testing.T) {
	t.Parallel()
	const page = "../../docs/migration.md"
	lines, blocks := readDocPage(t, page)
	require.Len(t, blocks, 4, "docs/migration.md: the drained check and the three cut-over steps")

	drained := newCLIEnv(t)
	redisstreamtest.Publish(t, drained.client, "orders", 0, 10, 5)
	require.NoError(t, drained.client.XGroupCreate(drained.ctx, "orders", "payments", "$").Err())
	require.NoError(t, drained.adm.CreateTopic(drained.ctx, "orders", 8))
	cutover := newCLIEnv(t)
	cutover.oldOrders("orders")
	checkDocOutputs(t, page, lines, blocks, docNormal, func(i int) *cliEnv {
		if i == 0 {
			return drained
		}
		return cutover
	})
}

// readDocPage reads page and its console blocks.
func readDocPage(t *testing.T, page string) ([]string, []docBlock) {
	t.Helper()
	src, err := os.ReadFile(page)
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	return lines, docBlocks(t, lines)
}

// checkDocOutputs runs every step of blocks in the env of its block and compares its output
// with the page's, both through normal; with STREAMQ_UPDATE_DOCS=1 it writes this run's
// output into page instead.
func checkDocOutputs(t *testing.T, page string, lines []string, blocks []docBlock, normal func(string) string,
	env func(block int) *cliEnv) {
	t.Helper()
	update := os.Getenv("STREAMQ_UPDATE_DOCS") == "1"
	outputs := make([][]string, len(blocks))
	for i, b := range blocks {
		for _, s := range b.steps {
			got := env(i).ok(s.args...)
			outputs[i] = append(outputs[i], got)
			if !update {
				assert.Equal(t, normal(s.output), normal(got), "streamq %s", strings.Join(s.args, " "))
			}
		}
	}
	if update {
		writeDocOutputs(t, page, lines, blocks, outputs)
	}
}

// writeDocOutputs replaces the output of every step of blocks in page with outputs.
func writeDocOutputs(t *testing.T, page string, lines []string, blocks []docBlock, outputs [][]string) {
	t.Helper()
	for i := len(blocks) - 1; i >= 0; i-- { // from the end: earlier blocks keep their lines
		b := blocks[i]
		var body []string
		for j, s := range b.steps {
			body = append(body, b.indent+"$ streamq "+strings.Join(s.args, " "))
			for _, l := range strings.Split(strings.TrimRight(outputs[i][j], "\n"), "\n") {
				body = append(body, b.indent+l)
			}
		}
		lines = append(lines[:b.at], append(body, lines[b.end:]...)...)
	}
	info, err := os.Stat(page)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(page, []byte(strings.Join(lines, "\n")), info.Mode().Perm()))
}
