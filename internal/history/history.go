// Package history holds every Redis command of the topics' rate and lag history: a bounded
// stream per topic of periodic samples of its counters (what was published, delivered,
// pending, the lag and its age per group, the dead letters), written by whichever streamq
// process samples the topic (the dashboard's sampler) and read back by admin.History, so a
// chart opened at 3 a.m. has the hour before it.
//
// Key, under the control prefix (default "streaming:mq"), T being the topic:
//
//	PREFIX:history:{T}   stream  one entry per sample: t (server ms of the read), added,
//	                             len, retries, dlq, groups (JSON: name -> {r, l, p, tl, m})
//
// It is in the topic's slot ({T}). Record keeps it bounded: entries older than the
// retention are trimmed, at most MaxEntries are kept, and the key expires after twice the
// retention without a sample. Writers running at once share one history: a sample is added
// only when the newest is at least the writer's minimum gap old.
package history

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamq-dev/streamq/internal/script"
)

// MaxEntries bounds a topic's history whatever the retention and gap: a day at one sample
// every 10 s.
const MaxEntries = 8640

//go:embed lua/record.lua
var recordSrc string

var recordScript = script.New(recordSrc)

// Bounds tell Record how often to add a sample and how long to keep it.
type Bounds struct {
	MinGap time.Duration // no sample is added while the newest is younger
	Retain time.Duration // samples older than this are trimmed
}

// Record appends s to the history stream key unless a sample younger than b.MinGap is there,
// trimming what is older than b.Retain; it reports whether it appended.
func Record(ctx context.Context, rdb redis.UniversalClient, key string, s Sample, b Bounds) (bool, error) {
	args := []any{b.MinGap.Milliseconds(), max(b.Retain.Milliseconds(), 1), MaxEntries}
	for _, kv := range s.encode() {
		args = append(args, kv)
	}
	err := recordScript.Run(ctx, rdb, []string{key}, args...).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record history %s: %w", key, err)
	}
	return true, nil
}

// Read returns the samples of history stream key taken after since, oldest first; entries
// that do not decode are left out.
func Read(ctx context.Context, rdb redis.UniversalClient, key string, since time.Time) ([]Sample, error) {
	start := "-"
	if !since.IsZero() {
		start = strconv.FormatInt(since.UnixMilli(), 10)
	}
	msgs, err := rdb.XRangeN(ctx, key, start, "+", MaxEntries).Result()
	if err != nil {
		return nil, fmt.Errorf("read history %s: %w", key, err)
	}
	out := make([]Sample, 0, len(msgs))
	for _, m := range msgs {
		if s, err := Decode(m.Values); err == nil && s.Time.After(since) {
			out = append(out, s)
		}
	}
	return out, nil
}
