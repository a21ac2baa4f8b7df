package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamq-dev/streamq/internal/history"
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

// HistorySample is one sample of a topic's history: its counters and, per group, what
// GroupHealth needs (live members, lag and its age).
type HistorySample struct {
	Topic string
	// Time is the Redis server's clock when the counters were read.
	Time         time.Time
	EntriesAdded int64 // TopicCounters.EntriesAdded
	Length       int64 // TopicCounters.Length
	DLQLength    int64 // dead letters, summed over partitions
	Groups       map[string]HistoryGroup
}

// HistoryGroup is one consumer group in a HistorySample.
type HistoryGroup struct {
	EntriesRead int64         // GroupCounters.EntriesRead
	Lag         int64         // entries still to deliver, summed over partitions
	Pending     int64         // delivered, not yet acked
	TimeLag     time.Duration // age of the oldest entry still to deliver, the largest of the partitions'
	Members     int           // live members
}

// TakeSample reads what a HistorySample holds of topic now: TopicCounters, the DLQ length,
// and every group's live members and time lag.
func (a *Admin) TakeSample(ctx context.Context, topic string) (HistorySample, error) {
	c, err := a.TopicCounters(ctx, topic)
	if err != nil {
		return HistorySample{}, err
	}
	s := HistorySample{Topic: topic, Time: c.Time, EntriesAdded: c.EntriesAdded, Length: c.Length,
		Groups: make(map[string]HistoryGroup, len(c.Groups))}
	if s.DLQLength, err = a.DLQSize(ctx, topic); err != nil {
		return HistorySample{}, err
	}
	ages, err := a.groupAges(ctx, topic, c.Groups)
	if err != nil {
		return HistorySample{}, err
	}
	live, err := a.live(ctx, a.memberships(topic, sortedKeys(c.Groups)))
	if err != nil {
		return HistorySample{}, err
	}
	for name, g := range c.Groups {
		s.Groups[name] = HistoryGroup{EntriesRead: g.EntriesRead, Lag: g.Lag, Pending: g.Pending,
			TimeLag: ages[name], Members: liveCount(live, name)}
	}
	return s, nil
}

// groupAges is the time lag of each group with a lag.
func (a *Admin) groupAges(ctx context.Context, topic string, groups map[string]GroupCounters) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for name, g := range groups {
		if g.Lag == 0 {
			continue
		}
		st, err := a.GroupStats(ctx, topic, name)
		if errors.Is(err, ErrGroupNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out[name] = st.TimeLag
	}
	return out, nil
}

func liveCount(live []LiveGroup, group string) int {
	for _, l := range live {
		if l.Group == group {
			return len(l.Members)
		}
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return mergeSorted(out, nil)
}

// RecordHistory appends s to its topic's history (keys.Space.History, a stream in the
// topic's slot) unless a sample younger than opts.Interval is there, and trims samples older
// than opts.Retention; it reports whether it appended. Any number of processes may record
// the same topic: they share one history.
func (a *Admin) RecordHistory(ctx context.Context, s HistorySample, opts HistoryOptions) (bool, error) {
	if _, err := a.topicMeta(ctx, s.Topic); err != nil {
		return false, err
	}
	opts.setDefaults()
	groups := make(map[string]history.Group, len(s.Groups))
	for name, g := range s.Groups {
		groups[name] = history.Group(g)
	}
	hs := history.Sample{Time: s.Time, EntriesAdded: s.EntriesAdded, Length: s.Length, DLQLength: s.DLQLength, Groups: groups}
	return history.Record(ctx, a.rdb, a.space.History(s.Topic), hs, history.Bounds{MinGap: opts.Interval, Retain: opts.Retention})
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
		out[i] = HistorySample{Topic: topic, Time: s.Time, EntriesAdded: s.EntriesAdded, Length: s.Length,
			DLQLength: s.DLQLength, Groups: make(map[string]HistoryGroup, len(s.Groups))}
		for name, g := range s.Groups {
			out[i].Groups[name] = HistoryGroup(g)
		}
	}
	return out, nil
}
