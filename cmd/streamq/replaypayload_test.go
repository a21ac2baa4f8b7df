package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/keys"
)

// "dlq replay" of a dead letter over the offload threshold stores its payload in its own key
// again, as the publisher did; --payload-threshold -1 replays it inline; a bad threshold is a
// usage error.
func TestCLIReplayOffloadsLargePayload(t *testing.T) {
	e := newCLIEnv(t)
	const topic = "big-letters"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	big := strings.Repeat("0123456789", 8000) // 80,000 bytes: over the default 64 KiB
	file := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(file, []byte(big), 0o600))
	added := regexp.MustCompile(`\d+-\d+`).FindString(e.ok("dlq", "add", topic, "0", "--reason", "too big", "--payload-file", file))
	require.NotEmpty(t, added)

	stream := keys.New("", "").PartitionStream(topic, 0)
	replayedAs := func(out string) map[string]any {
		t.Helper()
		id := regexp.MustCompile(`as (\d+-\d+)`).FindStringSubmatch(out)
		require.Len(t, id, 2, out)
		got, err := e.client.XRange(e.ctx, stream, id[1], id[1]).Result()
		require.NoError(t, err)
		require.Len(t, got, 1)
		return got[0].Values
	}
	offloaded := replayedAs(e.ok("dlq", "replay", topic, "0", added))
	assert.NotEmpty(t, offloaded["x-payload-hash-ref"], "stored in its own key")
	assert.Equal(t, "", offloaded["payload"])
	inline := replayedAs(e.ok("dlq", "--payload-threshold", "-1", "replay", topic, "0", added, "--again"))
	assert.NotContains(t, inline, "x-payload-hash-ref")
	assert.Equal(t, big, inline["payload"])

	r := e.run("dlq", "--payload-threshold", "-2", "replay", topic, "0", added)
	assert.Equal(t, exitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "Payloads.Threshold")
}
