package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
)

// demoTopic runs "streamq demo --keep" against the env's Redis and returns the topic it
// made (its name has a random suffix) and its group.
func (e *cliEnv) demoTopic() (topic, group string) {
	e.t.Helper()
	out := e.ok("demo", "--keep")
	names, err := e.adm.ListTopics(e.ctx)
	require.NoError(e.t, err)
	require.Len(e.t, names, 1, out)
	return names[0], "demo"
}

// incident adds to the demo topic what an incident looks like: group "billing" with entries
// delivered and not acked, group "workers" whose every message failed (retries, then the
// DLQ), a paused group reset to the beginning.
func (e *cliEnv) incident(topic string) {
	t := e.t
	t.Helper()
	for p := range 4 {
		require.NoError(t, e.client.XGroupCreate(e.ctx, "stream:topic:{"+topic+":p:"+string(rune('0'+p))+"}", "billing", "0").Err())
		_, err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "billing-7f9c2d-member",
			Streams: []string{"stream:topic:{" + topic + ":p:" + string(rune('0'+p)) + "}", ">"}, Count: 2}).Result()
		require.NoError(t, err)
	}
	e.failAll(topic, 4, 40) // the demo's 40 messages, already published
}

// failAll runs group "workers" on topic, nacking every message (one retry each, then the
// DLQ), until the topic's DLQ holds want dead letters.
func (e *cliEnv) failAll(topic string, partitions int, want int64) {
	t := e.t
	t.Helper()
	sub := fastSubscriber(t, e.client, workers, partitions)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	ch, err := sub.Subscribe(ctx, topic)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range ch {
			m.Metadata.Set(streamq.LastErrorMetadata, "payment provider timed out after 30s (upstream 504)")
			m.Nack()
		}
	}()
	require.Eventually(t, func() bool {
		n, err := e.adm.DLQSize(e.ctx, topic)
		return err == nil && n == want
	}, 20*time.Second, 20*time.Millisecond, "DLQ of %q", topic)
	require.NoError(t, sub.Close())
	wg.Wait()
}

// TestCLIDefaultTablesFit80Columns: on the demo topic, with pending entries, retries and dead
// letters, every table a command prints by default fits 80 columns; -o wide adds columns.
func TestCLIDefaultTablesFit80Columns(t *testing.T) {
	e := newCLIEnv(t)
	topic, group := e.demoTopic()
	e.incident(topic)
	first := e.ok("recent", topic, "-n", "1", "-o", "json")
	id := first[strings.Index(first, `"id": "`)+7:]
	id = id[:strings.IndexByte(id, '"')]
	for _, args := range [][]string{
		{"topics"}, {"info", topic}, {"groups", topic}, {"stats", topic, group}, {"stats", topic, "billing"},
		{"lag", topic, "billing"}, {"pending", topic, "billing"}, {"frontier", topic, group}, {"recent", topic},
		{"range", topic, "0"}, {"tail", topic, "--from", "beginning", "-n", "10"}, {"dlq", "list", topic},
		{"dlq", "topics"}, {"dlq", "size", topic}, {"dlq", "replay-all", topic, "--dry-run"},
		{"dlq", "show", topic, "0", dlqID(t, e, topic)}, {"version"}, {"outbox", "status"},
		{"reset-offset", topic, "billing", "2024-05-01T12:00:00Z", "--yes"}, {"stats", topic, "billing"},
	} {
		out := e.ok(args...)
		for _, line := range strings.Split(out, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), tableWidth, "streamq %s:\n%s", strings.Join(args, " "), out)
		}
		assert.NotContains(t, out, "18446744073709551615", "streamq %s shows an id nobody writes", strings.Join(args, " "))
	}
	_ = id
	wide := e.ok("recent", topic, "-o", "wide")
	assert.Contains(t, wide, "UUID")
	assert.Contains(t, wide, "METADATA")
	assert.Contains(t, e.ok("stats", topic, "billing", "-o", "wide"), "before 1714564800000-0",
		"a reset to a time: the id delivery resumes at, as users write it")
}

// dlqID is the id of a dead letter of partition 0 of topic.
func dlqID(t *testing.T, e *cliEnv, topic string) string {
	t.Helper()
	msgs, err := e.client.XRangeN(e.ctx, "stream:topic:{"+topic+":p:0}:dlq", "-", "+", 1).Result()
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	return msgs[0].ID
}
