//go:build linux

package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/admin"
	"github.com/streamq-dev/streamq/internal/fulltest"
	"github.com/streamq-dev/streamq/internal/keys"
)

// longName is a name of the longest length a topic may have (249 bytes), starting with prefix.
func longName(prefix string) string {
	return (prefix + strings.Repeat("0123456789", 25))[:keys.MaxNameLength]
}

// seedLongNames makes a topic, a group and a consumer with 249-byte names: the group holds
// back entries over max length and has two pending with the consumer, the topic has a dead
// letter of the group, and Redis memory is above the high-water mark (info's memory block).
func (e *cliEnv) seedLongNames() (topic, group, consumer string) {
	e.t.Helper()
	topic, group, consumer = longName("topic-"), longName("group-"), longName("consumer-")
	e.seedHeld(heldSeed{topic: topic, maxLen: "4", seed: func(e *cliEnv, stream string) {
		e.group(stream, group)
		err := e.client.XReadGroup(e.ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer,
			Streams: []string{stream, ">"}, Count: 2, Block: -1}).Err()
		require.NoError(e.t, err)
	}})
	_, err := e.adm.AddDeadLetter(e.ctx, admin.NewDeadLetter{Topic: topic, Group: group, Reason: "card declined", Payload: []byte("x")})
	require.NoError(e.t, err)
	fulltest.HighWater(e.t, e.client)
	return topic, group, consumer
}

// cutOf reports whether out shows name cut with "…": a word that is a prefix of name (at
// least minFlex-1 runes) followed by the ellipsis.
func cutOf(out, name string) bool {
	for _, w := range strings.Fields(out) {
		head, ok := strings.CutSuffix(w, "…")
		if ok && len(head) >= minFlex-1 && strings.HasPrefix(name, head) {
			return true
		}
	}
	return false
}

// requireFits checks that no line of out is wider than width and that name is cut in it.
func requireFits(t *testing.T, out string, width int, name string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "line %q of:\n%s", l, out)
	}
	assert.True(t, cutOf(out, name), "the name cut with …, on %d columns:\n%s", width, out)
}

// TestCLILongNamesAreCut: with 249-byte topic, group and consumer names, every table that
// lists them fits the width (a 100-column terminal, 80 columns when not a terminal), the
// names cut with "…"; -o wide and -o json show them whole.
func TestCLILongNamesAreCut(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	topic, group, consumer := e.seedLongNames()
	for _, c := range []struct {
		name  string
		args  []string
		cut   string // the name the table cuts
		shows string // what the output must hold besides
	}{
		{"dlq topics", []string{"dlq", "topics"}, topic, "DEAD LETTERS"},
		{"info", []string{"info", topic}, group, "memory held back"},
		{"topics", []string{"topics"}, topic, "PARTITIONS"},
		{"groups", []string{"groups", topic}, group, "CONSUMERS"},
		{"pending", []string{"pending", topic, group}, consumer, "DELIVERIES"},
		{"dlq list", []string{"dlq", "list", topic}, group, "card declined"},
		{"dlq replay-all --dry-run", []string{"dlq", "replay-all", topic, "--dry-run"}, group, "card declined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.with(t)
			term, code := e.onTerminal(100, c.args...)
			require.Equal(t, 0, code, term)
			requireFits(t, term, 100, c.cut)
			piped := e.ok(c.args...)
			requireFits(t, piped, tableWidth, c.cut)
			assert.Contains(t, piped, c.shows)
			for _, o := range []string{"wide", "json"} {
				assert.Contains(t, e.ok(append(c.args, "-o", o)...), c.cut, "-o %s: the whole name", o)
			}
		})
	}
}
