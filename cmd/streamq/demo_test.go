package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/redistest"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runDemoTest runs Demo with a small message count and checks its result.
func runDemoTest(t *testing.T, redisURL string) *DemoResult {
	t.Helper()
	const messages, keyCount, partitions = 16, 4, 4
	var out, logs syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Demo(ctx, DemoConfig{
		RedisURL: redisURL, Messages: messages, Keys: keyCount, Partitions: partitions,
		Timeout: 30 * time.Second, Log: &logs,
	}, &out)
	t.Logf("demo output:\n%s", out.String())
	if l := logs.String(); l != "" {
		t.Logf("library logs:\n%s", l)
	}
	require.NoError(t, err)

	assert.Equal(t, redisURL == "", res.Embedded)
	assert.Equal(t, messages, res.Published)
	assert.Equal(t, messages, res.Handled, "every message handled")
	assert.Equal(t, messages, res.Deliveries, "no message handled twice")
	assert.Zero(t, res.LibraryErrors, "errors logged by streamq or Watermill")
	assert.True(t, res.OrderKept)

	// Every key: one member, the key's partition, publish order.
	require.Len(t, res.KeyOrder, keyCount)
	for k := 1; k <= keyCount; k++ {
		key := customer(k)
		assert.Len(t, res.KeyMembers[key], 1, "members that handled %s", key)
		var want []int
		for i := k; i <= messages; i += keyCount {
			want = append(want, i)
		}
		assert.Equal(t, want, res.KeyOrder[key], "order of %s", key)
	}

	// The members split the partitions and each handled only its own, and only its keys.
	require.Len(t, res.Members, 2)
	leased := map[int]string{}
	total := 0
	for _, m := range res.Members {
		assert.NotEmpty(t, m.Leased, "%s leased no partition", m.Name)
		for _, p := range m.Leased {
			leased[p] = m.Name
		}
		for _, p := range m.Partitions {
			assert.Equal(t, m.Name, leased[p], "%s handled partition %d it did not lease", m.Name, p)
		}
		for _, key := range m.Keys {
			p := streamq.HashPartitioner{}.Partition(key, partitions)
			assert.Equal(t, m.Name, leased[p], "%s handled %s of partition %d", m.Name, key, p)
		}
		total += m.Messages
	}
	assert.Len(t, leased, partitions)
	assert.Equal(t, messages, total)

	text := out.String()
	assert.Contains(t, text, "per-key order kept: yes")
	assert.Contains(t, text, "every key handled by exactly one member: yes")
	if redisURL == "" {
		assert.Contains(t, text, "no REDIS_URL set: using an embedded miniredis at ")
	}
	return res
}

func TestDemoEmbeddedMiniredis(t *testing.T) {
	res := runDemoTest(t, "")
	assert.Equal(t, "orders", res.Topic)
}

func TestDemoRealRedis(t *testing.T) {
	srv := redistest.Start(t)
	res := runDemoTest(t, srv.URL())
	assert.True(t, strings.HasPrefix(res.Topic, "orders-"), "topic %q has a random suffix", res.Topic)

	// The demo deletes its keys from a real Redis.
	ctx := context.Background()
	left, err := srv.Client(t).Keys(ctx, "*"+res.Topic+"*").Result()
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestDemoUnreachableRedis(t *testing.T) {
	var out bytes.Buffer
	_, err := Demo(context.Background(), DemoConfig{RedisURL: "redis://127.0.0.1:1", Timeout: 10 * time.Second}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach Redis at redis://127.0.0.1:1")
}

func TestCLI(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	cases := []struct {
		name     string
		args     []string
		code     int
		contains string // in stdout+stderr
	}{
		{"no command", nil, 2, "Usage:"},
		{"help", []string{"help"}, 0, "demo"},
		{"--help", []string{"--help"}, 0, "Commands:"},
		{"help demo", []string{"help", "demo"}, 0, "-partitions"},
		{"help unknown", []string{"help", "nope"}, 2, `unknown command "nope"`},
		{"unknown", []string{"nope"}, 2, `unknown command "nope"`},
		{"demo -h", []string{"demo", "-h"}, 0, "Usage: streamq demo"},
		{"bad flag", []string{"demo", "--bogus"}, 2, "unknown flag: --bogus"},
		{"bad value", []string{"demo", "--messages", "0"}, 2, "--messages must be at least 1"},
		{"extra arg", []string{"demo", "extra"}, 2, `unexpected argument "extra"`},
		{"demo", []string{"demo", "--messages", "8", "--keys", "3", "--partitions", "2"}, 0, "per-key order kept: yes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := run(c.args, &stdout, &stderr)
			all := stdout.String() + stderr.String()
			assert.Equal(t, c.code, code, all)
			assert.Contains(t, all, c.contains)
		})
	}
}
