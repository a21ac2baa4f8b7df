package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/history"
	"github.com/streamq-dev/streamq/internal/outage"
)

// Defaults of HistoryOptions.
const (
	// DefaultHistoryInterval is the least time between two samples of a topic's history.
	DefaultHistoryInterval = 10 * time.Second
	// DefaultHistoryRetention is how long samples are kept: the charts' last hour, and some.
	DefaultHistoryRetention = 90 * time.Minute
)

// HistoryOptions bound a topic's history (RecordHistory).
type HistoryOptions struct {
	// Interval is the least time between two samples: a sample recorded sooner after the
	// newest one (by any process) is dropped. Optional; default DefaultHistoryInterval (10 s).
	Interval time.Duration
	// Retention is how long samples are kept. Optional; default DefaultHistoryRetention
	// (90 min). At most MaxHistorySamples are kept whatever the retention.
	Retention time.Duration
}

// MaxHistorySamples bounds one topic's history.
const MaxHistorySamples = history.MaxEntries

// HistorySample is one sample of a topic's history: its published messages and retries,
// dead letters and, per group, its lag (TopicLag), deliveries and live members.
type HistorySample struct {
	Topic string
	// Time is the Redis server's clock when the lag was read.
	Time      time.Time
	Published int64 // TopicLag.Published: read twice for a publish rate
	Length    int64 // TopicLag.Length: the published messages held
	Retries   int64 // TopicLag.Retries: the retry entries held
	DLQLength int64 // dead letters, summed over partitions
	Groups    map[string]HistoryGroup
}

// HistoryGroup is one consumer group in a HistorySample.
type HistoryGroup struct {
	EntriesRead int64         // GroupCounters.EntriesRead: read twice for a consume rate
	Lag         int64         // GroupLag.Lag
	Pending     int64         // GroupLag.Pending
	TimeLag     time.Duration // GroupLag.TimeLag: the age of the oldest entry still to deliver
	Members     int           // live members
}

// TakeSample reads what a HistorySample holds of topic now: TopicLag, the groups'
// entries-read (TopicCounters), the DLQ length and the groups' live members.
func (a *Admin) TakeSample(ctx context.Context, topic string) (HistorySample, error) {
	tl, err := a.TopicLag(ctx, topic)
	if err != nil {
		return HistorySample{}, err
	}
	c, err := a.TopicCounters(ctx, topic)
	if err != nil {
		return HistorySample{}, err
	}
	s := HistorySample{Topic: topic, Time: tl.Time, Published: tl.Published, Length: tl.Length, Retries: tl.Retries,
		Groups: make(map[string]HistoryGroup, len(tl.Groups))}
	if s.DLQLength, err = a.DLQSize(ctx, topic); err != nil {
		return HistorySample{}, err
	}
	names := make([]string, len(tl.Groups))
	for i, g := range tl.Groups {
		names[i] = g.Group
	}
	live, err := a.live(ctx, a.memberships(topic, names))
	if err != nil {
		return HistorySample{}, err
	}
	for _, g := range tl.Groups {
		s.Groups[g.Group] = HistoryGroup{EntriesRead: c.Groups[g.Group].EntriesRead, Lag: g.Lag, Pending: g.Pending,
			TimeLag: g.TimeLag, Members: liveCount(live, g.Group)}
	}
	return s, nil
}

func liveCount(live []LiveGroup, group string) int {
	for _, l := range live {
		if l.Group == group {
			return len(l.Members)
		}
	}
	return 0
}

// RecordHistory appends s to its topic's history (keys.Space.History, a stream in the
// topic's slot) unless a sample younger than opts.Interval is there, and trims samples older
// than opts.Retention; it reports whether it appended. Any number of processes may record
// the same topic: they share one history. The history adds memory: at maxmemory (or where
// Redis refuses writes) it is not written, and the error wraps ErrWritesRefused.
func (a *Admin) RecordHistory(ctx context.Context, s HistorySample, opts HistoryOptions) (bool, error) {
	if _, err := a.topicMeta(ctx, s.Topic); err != nil {
		return false, err
	}
	opts.setDefaults()
	groups := make(map[string]history.Group, len(s.Groups))
	for name, g := range s.Groups {
		groups[name] = history.Group(g)
	}
	hs := history.Sample{Time: s.Time, EntriesAdded: s.Published, Length: s.Length, Retries: s.Retries, DLQLength: s.DLQLength, Groups: groups}
	ok, err := history.Record(ctx, a.rdb, a.space.History(s.Topic), hs, history.Bounds{MinGap: opts.Interval, Retain: opts.Retention})
	if outage.RefusesWrites(err) {
		return false, fmt.Errorf("%w: %w", ErrWritesRefused, err)
	}
	return ok, err
}

func (o *HistoryOptions) setDefaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultHistoryInterval
	}
	if o.Retention <= 0 {
		o.Retention = DefaultHistoryRetention
	}
}

// History returns the samples of topic's history taken within window before the Redis
// server's clock (all of them when window <= 0), oldest first; an empty result when nothing
// recorded it.
func (a *Admin) History(ctx context.Context, topic string, window time.Duration) ([]HistorySample, error) {
	if _, err := a.topicMeta(ctx, topic); err != nil {
		return nil, err
	}
	var since time.Time
	if window > 0 {
		now, err := a.serverTime(ctx)
		if err != nil {
			return nil, err
		}
		since = now.Add(-window)
	}
	got, err := history.Read(ctx, a.rdb, a.space.History(topic), since)
	if err != nil {
		return nil, fmt.Errorf("history of %q: %w", topic, err)
	}
	out := make([]HistorySample, len(got))
	for i, s := range got {
		out[i] = HistorySample{Topic: topic, Time: s.Time, Published: s.EntriesAdded, Length: s.Length,
			Retries: s.Retries, DLQLength: s.DLQLength, Groups: make(map[string]HistoryGroup, len(s.Groups))}
		for name, g := range s.Groups {
			out[i].Groups[name] = HistoryGroup(g)
		}
	}
	return out, nil
}
