package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// "dlq add" writes a dead letter that "dlq list" and "dlq show" show and "dlq replay" appends
// to its partition; its payload comes from --payload, a file or stdin.
func TestCLIDLQAdd(t *testing.T) {
	e := newCLIEnv(t)
	const topic = "tools"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 3))
	file := filepath.Join(t.TempDir(), "order.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"id":7}`), 0o600))

	var added deadLetterView
	raw := e.jsonOf(&added, "dlq", "add", topic, "2", "--reason", "rejected by the reconciler", "--payload-file", file,
		"--metadata", "customer=c-7", "--metadata", "note=a=b", "--group", "billing", "--original-id", "1718000000000-0",
		"--uuid", "u-1")
	require.NotEmpty(t, added.ID)
	assert.Equal(t, topic, added.Topic)
	assert.Equal(t, 2, added.Partition)
	assert.Equal(t, "u-1", added.UUID)
	assert.Equal(t, `{"id":7}`, added.Payload)
	assert.Equal(t, "c-7", added.Metadata["customer"])
	assert.Equal(t, "a=b", added.Metadata["note"])
	assert.Equal(t, "rejected by the reconciler", added.Reason)
	assert.Equal(t, "billing", added.Group)
	assert.Equal(t, "1718000000000-0", added.OriginalMessageID)

	d, err := e.adm.DLQEntry(e.ctx, topic, 2, added.ID)
	require.NoError(t, err)
	want, err := json.Marshal(newDeadLetterView(d))
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(raw), "the JSON is the dead letter as admin reads it")
	assert.Contains(t, e.ok("dlq", "list", topic), added.ID)
	assert.Contains(t, e.ok("dlq", "show", topic, "2", added.ID), `{"id":7}`)

	out := e.ok("dlq", "add", topic, "0", "--reason", "inline", "--payload", "hello")
	assert.Regexp(t, `^added dead letter \d+-\d+ to partition 0 of "tools"\n$`, out)

	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := e.command(ctx, "dlq", "add", topic, "1", "--reason", "piped", "--payload-file", "-", "--json")
	cmd.Stdin = strings.NewReader("from stdin")
	r := runCmd(t, cmd)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"payload": "from stdin"`)
	assert.Equal(t, "3\n", e.ok("dlq", "size", topic))

	// Replayed to its partition.
	var rep replayView
	e.jsonOf(&rep, "dlq", "replay", topic, "2", added.ID)
	entries, err := e.client.XRange(e.ctx, "stream:topic:{tools:p:2}", rep.NewID, rep.NewID).Result()
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "u-1", entries[0].Values[streamq.UUIDField])
	assert.Equal(t, `{"id":7}`, entries[0].Values[streamq.PayloadField])

	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no reason", []string{"dlq", "add", topic, "0"}, exitUsage, `"reason" not set`},
		{"no partition", []string{"dlq", "add", topic, "--reason", "r"}, exitUsage, "missing argument PARTITION"},
		{"bad partition", []string{"dlq", "add", topic, "x", "--reason", "r"}, exitUsage, "PARTITION"},
		{"partition out of range", []string{"dlq", "add", topic, "3", "--reason", "r"}, exitUsage, "partition 3"},
		{"unknown topic", []string{"dlq", "add", "nope", "0", "--reason", "r"}, exitNotFound, "topic not found"},
		{"bad metadata", []string{"dlq", "add", topic, "0", "--reason", "r", "--metadata", "novalue"}, exitUsage, "KEY=VALUE"},
		{"both payloads", []string{"dlq", "add", topic, "0", "--reason", "r", "--payload", "a", "--payload-file", file}, exitUsage, "payload"},
		{"missing payload file", []string{"dlq", "add", topic, "0", "--reason", "r", "--payload-file", file + ".none"}, exitUsage, "--payload-file"},
		{"bad original id", []string{"dlq", "add", topic, "0", "--reason", "r", "--original-id", "yesterday"}, exitUsage, "not a stream id"},
		{"empty reason", []string{"dlq", "add", topic, "0", "--reason", ""}, exitUsage, "reason"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(c.args...)
			assert.Equal(t, c.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, c.stderr)
		})
	}
	assert.Equal(t, "3\n", e.ok("dlq", "size", topic), "no failed add wrote a dead letter")
}
