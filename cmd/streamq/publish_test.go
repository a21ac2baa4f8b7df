package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/admin"
)

// runStdin runs the binary with args and stdin.
func (e *cliEnv) runStdin(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(e.t, cmd)
}

// entry reads the entry id of topic's partition p.
func (e *cliEnv) entry(topic string, p int, id string) admin.Entry {
	e.t.Helper()
	es, err := e.adm.Range(e.ctx, topic, p, id, id, 1)
	require.NoError(e.t, err)
	require.Len(e.t, es, 1, "entry %s of partition %d", id, p)
	return es[0]
}

// TestCLIPublish: "streamq publish" sends stdin as one message, byte for byte, with its key
// (routed as a Publisher routes it), headers and UUID, and says where it went; --partition
// forces the partition; --lines sends a message per line, in order; bad flags are usage
// errors; a missing topic is refused unless --partitions creates it.
func TestCLIPublish(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic = "published"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 4))

	payload := "{\"order\":1}\n\x00binary\tbytes\n"
	r := e.runStdin(payload, "publish", topic, "--key", "customer-7", "--header", "source=cli", "-H", "trace=a=b",
		"--uuid", "test-uuid-1")
	require.Equal(t, 0, r.code, r.stderr)
	var sent publishedView
	_, err := fmtSscanPublished(r.stdout, &sent)
	require.NoError(t, err, r.stdout)
	got := e.entry(topic, sent.Partition, sent.ID)
	assert.Equal(t, payload, string(got.Payload), "byte for byte")
	assert.Equal(t, "test-uuid-1", got.UUID)
	assert.Equal(t, "cli", got.Metadata["source"])
	assert.Equal(t, "a=b", got.Metadata["trace"])
	assert.Equal(t, "customer-7", got.Metadata[streamq.PartitionKeyMetadata])
	lib := message.NewMessage(watermill.NewUUID(), []byte("x"))
	lib.Metadata.Set(streamq.PartitionKeyMetadata, "customer-7")
	require.NoError(t, e.pub.Publish(topic, lib))
	p, _ := streamq.PublishedPartition(lib)
	assert.Equal(t, p, sent.Partition, "the key routes as a Publisher routes it")

	var forced []publishedView
	r = e.runStdin("a\n\nb\nc\n", "publish", topic, "--partition", "2", "--lines", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, jsonUnmarshal(r.stdout, &forced))
	require.Len(t, forced, 3, "empty lines skipped")
	for i, want := range []string{"a", "b", "c"} {
		assert.Equal(t, 2, forced[i].Partition)
		assert.Equal(t, want, string(e.entry(topic, 2, forced[i].ID).Payload), "in order")
	}
	table := e.runStdin("x\ny\n", "publish", topic, "--lines")
	require.Equal(t, 0, table.code, table.stderr)
	assert.Regexp(t, `(?m)^PARTITION +ID +UUID$`, table.stdout)
	assert.Contains(t, table.stdout, `published 2 messages to "published"`)

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--partition", "9"}, "--partition 9 is out of range"},
		{[]string{"--header", "novalue"}, `--header takes key=value, got "novalue"`},
		{[]string{"--lines", "--uuid", "u"}, "--uuid names one message"},
		{[]string{"--partition", "abc"}, `invalid value "abc" for --partition: give a whole number`},
	} {
		r := e.runStdin("x", append([]string{"publish", topic}, bad.args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", bad.args, r.stderr)
		assert.Contains(t, r.stderr, bad.want, bad.args)
	}

	r = e.runStdin("x", "publish", "pubilshed")
	assert.Equal(t, exitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `topic "pubilshed" does not exist: give --partitions N to create it`)
	topics, err := e.adm.ListTopics(e.ctx)
	require.NoError(t, err)
	assert.NotContains(t, topics, "pubilshed", "a typo creates no topic")
	e.ok("publish", "fresh", "--partitions", "3")
	info, err := e.adm.QueueInfo(e.ctx, "fresh")
	require.NoError(t, err)
	assert.Equal(t, 3, info.Partitions)
}

// publishedLine is what publish prints for one message.
var publishedLine = regexp.MustCompile(`^published message (\S+) to partition (\d+) of "[^"]+" as (\d+-\d+)\n$`)

// fmtSscanPublished reads publish's line for one message into v.
func fmtSscanPublished(out string, v *publishedView) (int, error) {
	m := publishedLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("not publish's line: %q", out)
	}
	p, err := strconv.Atoi(m[2])
	*v = publishedView{UUID: m[1], Partition: p, ID: m[3]}
	return 3, err
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
