package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
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
	c, tails, err := a.streamCounters(ctx, keys)
	if err != nil {
		return TopicCounters{}, err
	}
	c.Topic, c.Partitions = topic, n
	groups, err := a.groupsOf(ctx, keys)
	if err != nil {
		return TopicCounters{}, err
	}
	lags, err := a.lags(ctx, keys, groups, tails)
	if err != nil {
		return TopicCounters{}, err
	}
	c.Groups = sumGroupCounters(groups, lags)
	return c, nil
}

// streamCounters reads TIME and XINFO STREAM of every key in one pipeline; a stream that was
// never written counts as empty. It also returns each stream's tail, for lags.
func (a *Admin) streamCounters(ctx context.Context, keys []string) (TopicCounters, []*tail, error) {
	var now *redis.TimeCmd
	infos := make([]*redis.XInfoStreamCmd, len(keys))
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		now = pipe.Time(ctx)
		for i, k := range keys {
			infos[i] = pipe.XInfoStream(ctx, k)
		}
		return nil
	})
	if err := now.Err(); err != nil {
		return TopicCounters{}, nil, fmt.Errorf("read server time: %w", err)
	}
	c := TopicCounters{Time: now.Val()}
	tails := make([]*tail, len(keys))
	for i, info := range infos {
		if err := info.Err(); err != nil && !noSuchKey(err) {
			return TopicCounters{}, nil, fmt.Errorf("info of %s: %w", keys[i], err)
		}
		if v := info.Val(); v != nil {
			c.EntriesAdded += v.EntriesAdded
			c.Length += v.Length
		}
		tails[i] = tailOf(info.Val())
	}
	return c, tails, nil
}

func sumGroupCounters(groups [][]redis.XInfoGroup, lags [][]lag) map[string]GroupCounters {
	out := map[string]GroupCounters{}
	for p, gs := range groups {
		for i, g := range gs {
			gc := out[g.Name]
			gc.EntriesRead += max(g.EntriesRead, 0)
			gc.Lag += lags[p][i].n
			gc.Pending += g.Pending
			out[g.Name] = gc
		}
	}
	return out
}
