package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLIFlagsInTheCommandsWords: durations take days everywhere, conflicting flags are
// explained in the command's words (exit 2), and an empty result says what the filter hid.
func TestCLIFlagsInTheCommandsWords(t *testing.T) {
	e := newCLIEnv(t)
	e.seed()
	for p := range ordersParts {
		stream := "stream:topic:{" + ordersTopic + ":p:" + string(rune('0'+p)) + "}"
		require.NoError(t, e.client.XGroupCreate(e.ctx, stream, "billing", "0").Err())
		require.NoError(t, e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "c",
			Streams: []string{stream, ">"}, Count: 2}).Err())
	}
	file := filepath.Join(t.TempDir(), "payload")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))

	assert.Contains(t, e.ok("pending", ordersTopic, "billing", "--min-idle", "1d"),
		`no pending entry of group "billing" on topic "orders" is idle 1d or more: --min-idle hid 8 pending entries`)
	for p := range ordersParts {
		require.NoError(t, e.client.XGroupCreate(e.ctx, "stream:topic:{"+ordersTopic+":p:"+string(rune('0'+p))+"}", "idle", "0").Err())
	}
	assert.Contains(t, e.ok("pending", ordersTopic, "idle", "--min-idle", "1d"), `group "idle" has no pending entries`,
		"nothing pending at all: nothing was hidden")
	assert.Contains(t, e.ok("trim", ordersTopic, "--older-than", "1d", "--yes"), "removed 0 entries")
	assert.Contains(t, e.ok("dlq", "list", failing, "--failed-before", "2d"), "has no dead letters")
	assert.Contains(t, e.ok("dlq", "list", failing, "--failed-within", "1d12h"), "cannot parse")

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bad duration", []string{"pending", ordersTopic, "billing", "--min-idle", "1x"}, "not a duration: use a number with a unit, d (days)"},
		{"two trims", []string{"trim", ordersTopic, "--maxlen", "5", "--older-than", "1d", "--yes"}, "two ways to trim, by count"},
		{"no trim", []string{"trim", ordersTopic}, "say what to remove: --maxlen N keeps the newest N entries"},
		{"page size by count", []string{"trim", ordersTopic, "--maxlen", "5", "--page-size", "10"}, "--page-size sets the entries removed per step with --older-than"},
		{"two payloads", []string{"dlq", "add", ordersTopic, "0", "--reason", "r", "--payload", "a", "--payload-file", file}, "--payload and --payload-file both give the payload"},
		{"two outputs", []string{"topics", "--json", "-o", "wide"}, "--json and -o wide ask for two outputs"},
		{"unknown output", []string{"topics", "-o", "yaml"}, `"yaml" is not an output: give table, wide or json`},
		{"count out of range", []string{"tail", ordersTopic, "--count", "99999999999999999999"}, `invalid value "99999999999999999999" for --count: out of range`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(c.args...)
			assert.Equal(t, exitUsage, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, c.want)
		})
	}
}

// TestCLITimesHaveTheirZone: tables show local time with its zone, or UTC with --utc.
func TestCLITimesHaveTheirZone(t *testing.T) {
	if _, err := os.Stat("/usr/share/zoneinfo/Asia/Tokyo"); err != nil {
		t.Skip("no tzdata")
	}
	e := newCLIEnv(t)
	e.seed()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	cmd := e.command(ctx, "recent", ordersTopic, "-n", "1")
	cmd.Env = append(cmd.Env, "TZ=Asia/Tokyo")
	r := runCmd(t, cmd)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d JST`, r.stdout)
	cmd = e.command(ctx, "recent", ordersTopic, "-n", "1", "--utc", "-o", "wide")
	cmd.Env = append(cmd.Env, "TZ=Asia/Tokyo")
	r = runCmd(t, cmd)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Regexp(t, `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC`, r.stdout, "wide: to the millisecond")
}
