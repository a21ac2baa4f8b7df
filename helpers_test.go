package streamq_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// forEachMaster calls fn with a client of every master of a cluster client, or with the
// client itself when it is a single node: for commands that only see one node's keys (SCAN,
// SCRIPT FLUSH, INFO).
func forEachMaster(t testing.TB, client redis.UniversalClient, fn func(ctx context.Context, node *redis.Client) error) {
	t.Helper()
	ctx := context.Background()
	switch c := client.(type) {
	case *redis.ClusterClient:
		require.NoError(t, c.ForEachMaster(ctx, fn))
	case *redis.Client:
		require.NoError(t, fn(ctx, c))
	default:
		t.Fatalf("unsupported client %T", client)
	}
}

// logLine is one line a captureLogger recorded.
type logLine struct {
	level  string // "error", "info", "debug" or "trace"
	msg    string
	fields watermill.LogFields
}

// captureLogger records every log line, safe for concurrent use (watermill's
// CaptureLoggerAdapter hands out its map unlocked). Children made by With share the record.
type captureLogger struct {
	rec    *logRecord
	fields watermill.LogFields
}

type logRecord struct {
	mu    sync.Mutex
	lines []logLine
}

func newCaptureLogger() *captureLogger { return &captureLogger{rec: &logRecord{}} }

func (c *captureLogger) add(level, msg string, err error, fields watermill.LogFields) {
	all := c.fields.Add(fields)
	if err != nil {
		all = all.Add(watermill.LogFields{"err": err})
	}
	c.rec.mu.Lock()
	c.rec.lines = append(c.rec.lines, logLine{level, msg, all})
	c.rec.mu.Unlock()
}

func (c *captureLogger) Error(msg string, err error, fields watermill.LogFields) {
	c.add("error", msg, err, fields)
}
func (c *captureLogger) Info(msg string, fields watermill.LogFields) { c.add("info", msg, nil, fields) }
func (c *captureLogger) Debug(msg string, fields watermill.LogFields) {
	c.add("debug", msg, nil, fields)
}
func (c *captureLogger) Trace(msg string, fields watermill.LogFields) {
	c.add("trace", msg, nil, fields)
}

func (c *captureLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return &captureLogger{rec: c.rec, fields: c.fields.Add(fields)}
}

// matching returns the lines of level whose message contains part.
func (c *captureLogger) matching(level, part string) []logLine {
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	var out []logLine
	for _, l := range c.rec.lines {
		if l.level == level && strings.Contains(l.msg, part) {
			out = append(out, l)
		}
	}
	return out
}
