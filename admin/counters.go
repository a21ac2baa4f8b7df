package admin

import (
	"context"
	"time"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/stream"
)

// TopicCounters is a snapshot of a topic's ever-growing counters, for rates: read it twice
// and divide the differences by the time between the two reads.
type TopicCounters struct {
	Topic      string
	Partitions int
	// Time is the Redis server's clock when the counters were read (the clock stream ids are
	// written with), so rates do not depend on the reader's clock.
	Time time.Time
	// EntriesAdded is how many entries were ever appended to the topic's partitions (Redis 7
	// XINFO STREAM entries-added), summed; trimming and deleting do not lower it.
	EntriesAdded int64
	// Length is how many entries the partitions hold now, summed.
	Length int64
	// Groups holds every consumer group registered on any partition, by name.
	Groups map[string]GroupCounters
}

// GroupCounters are one consumer group's counters, summed over a topic's partitions.
type GroupCounters struct {
	// EntriesRead is how many entries were delivered to the group so far (Redis 7 XINFO
	// GROUPS entries-read; a partition where Redis does not know it counts 0). XGROUP SETID
	// (ResetGroupOffset) may move it either way.
	EntriesRead int64
	// Lag is the entries not yet delivered to the group, as GroupInfo.Lag.
	Lag int64
	// Pending is the entries delivered and not yet acked.
	Pending int64
}

// TopicCounters reads the server time, XINFO STREAM and XINFO GROUPS of every partition of
// topic (two pipelines, plus one to count lags Redis reports unknown) and sums them.
func (a *Admin) TopicCounters(ctx context.Context, topic string) (TopicCounters, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return TopicCounters{}, err
	}
	keys := streams(a.space.PartitionStream, topic, 0, n)
	now, infos, err := inspect.Counters(ctx, a.rdb, keys)
	if err != nil {
		return TopicCounters{}, err
	}
	c := TopicCounters{Topic: topic, Partitions: n, Time: now}
	tails := make([]*stream.Tail, n)
	for p, info := range infos {
		if info != nil {
			c.EntriesAdded += info.EntriesAdded
			c.Length += info.Length
		}
		tails[p] = stream.TailOf(info)
	}
	groups, err := stream.Groups(ctx, a.rdb, keys)
	if err != nil {
		return TopicCounters{}, err
	}
	lags, err := stream.Lags(ctx, a.rdb, keys, groups, tails)
	if err != nil {
		return TopicCounters{}, err
	}
	c.Groups = sumGroupCounters(groups, lags)
	return c, nil
}

func sumGroupCounters(groups [][]stream.GroupInfo, lags [][]stream.Lag) map[string]GroupCounters {
	out := map[string]GroupCounters{}
	for p, gs := range groups {
		for i, g := range gs {
			gc := out[g.Name]
			gc.EntriesRead += max(g.EntriesRead, 0)
			gc.Lag += lags[p][i].N
			gc.Pending += g.Pending
			out[g.Name] = gc
		}
	}
	return out
}
