package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/streamq-dev/streamq/internal/inspect"
)

// MaxMemoryTopics bounds the topics MemoryUse reads (in the registry's order): beyond it the
// answer says it is Truncated.
const MaxMemoryTopics = 256

// GroupMemory is what one consumer group holds back in Redis's memory on a topic: the entries
// it has not acked (the partitions keep them for it), and its retries waiting. Sizes are
// estimates: a partition's entries are taken to be of its mean size (MEMORY USAGE of its
// stream, sampled, over its length). An entry two groups have not acked counts for both.
type GroupMemory struct {
	Topic, Group string
	// Unacked is its lag plus its pending entries, summed over partitions (a lower bound where
	// the lag is); UnackedBytes about their memory.
	Unacked, UnackedBytes int64
	// Retries is its retries waiting in the partitions' retry sets, RetryBytes their memory.
	Retries, RetryBytes int64
	// Partitions are the partitions where it holds something, in partition order.
	Partitions []PartitionMemoryHold
}

// PartitionMemoryHold is what a group holds back on one partition.
type PartitionMemoryHold struct {
	Partition             int
	Unacked, UnackedBytes int64
	Retries, RetryBytes   int64
}

// Bytes is all the group holds back: UnackedBytes and RetryBytes.
func (g GroupMemory) Bytes() int64 { return g.UnackedBytes + g.RetryBytes }

// TopicMemoryUse is what a topic holds in Redis's memory, and which of its groups hold it back.
type TopicMemoryUse struct {
	Topic string
	// Entries is the partitions' entries, StreamBytes their memory (MEMORY USAGE, sampled).
	Entries, StreamBytes int64
	// DeadLetters is the DLQ's entries, DeadLetterBytes their memory: a DLQ is kept until
	// its letters are replayed or dropped, by no group.
	DeadLetters, DeadLetterBytes int64
	// Groups are the topic's groups, the one holding the most memory first (then by name).
	Groups []GroupMemory
}

// MemoryUse is who holds Redis's memory, over the registered topics.
type MemoryUse struct {
	Topics []TopicMemoryUse // by topic
	// Cause is the group that holds back the most memory (unacked entries and retries) of
	// every topic read; nil when no group holds any back.
	Cause *GroupMemory
	// Truncated: more than MaxMemoryTopics topics are registered; the others were not read.
	Truncated bool
}

// Group returns what group holds back on topic (false when Use does not have it).
func (u MemoryUse) Group(topic, group string) (GroupMemory, bool) {
	for _, t := range u.Topics {
		for _, g := range t.Groups {
			if t.Topic == topic && g.Group == group {
				return g, true
			}
		}
	}
	return GroupMemory{}, false
}

// TopicMemoryUse reads the lag of every group of topic (as TopicLag does), then, in one
// pipeline, the length and memory of each partition's stream and DLQ and the count and
// memory of each group's retries (ZCARD and MEMORY USAGE of its retry set and items).
// ErrTopicNotFound for a topic that is not registered.
func (a *Admin) TopicMemoryUse(ctx context.Context, topic string) (TopicMemoryUse, error) {
	lag, err := a.TopicLag(ctx, topic)
	if err != nil {
		return TopicMemoryUse{}, err
	}
	mem, err := inspect.PartitionsMemory(ctx, a.rdb, a.memoryKeys(lag))
	if err != nil {
		return TopicMemoryUse{}, fmt.Errorf("memory of %q: %w", topic, err)
	}
	return topicMemoryUse(lag, mem), nil
}

// MemoryUse reads TopicMemoryUse of every registered topic (at most MaxMemoryTopics) and names
// the group that holds back the most. A topic deleted meanwhile is left out.
func (a *Admin) MemoryUse(ctx context.Context) (MemoryUse, error) {
	topics, err := a.ListTopics(ctx)
	if err != nil {
		return MemoryUse{}, err
	}
	var u MemoryUse
	if len(topics) > MaxMemoryTopics {
		topics, u.Truncated = topics[:MaxMemoryTopics], true
	}
	sort.Strings(topics)
	for _, t := range topics {
		tu, err := a.TopicMemoryUse(ctx, t)
		if errors.Is(err, ErrTopicNotFound) {
			continue
		}
		if err != nil {
			return MemoryUse{}, err
		}
		u.Topics = append(u.Topics, tu)
	}
	u.Cause = cause(u.Topics)
	return u, nil
}

// cause is the group holding back the most memory; nil when none holds any.
func cause(topics []TopicMemoryUse) *GroupMemory {
	var best *GroupMemory
	for i := range topics {
		for j := range topics[i].Groups {
			g := &topics[i].Groups[j]
			if g.Bytes() > 0 && (best == nil || g.Bytes() > best.Bytes()) {
				best = g
			}
		}
	}
	return best
}

// memoryKeys are the keys PartitionsMemory reads of lag's topic: each partition's stream, DLQ
// and, for each group of lag.Groups, its retry set and items.
func (a *Admin) memoryKeys(lag TopicLag) []inspect.MemoryKeys {
	out := make([]inspect.MemoryKeys, lag.Partitions)
	for p := range out {
		k := inspect.MemoryKeys{Stream: a.space.PartitionStream(lag.Topic, p), DLQ: a.space.DLQ(lag.Topic, p)}
		for _, g := range lag.Groups {
			k.Retries = append(k.Retries, inspect.RetryKeys{Set: a.space.Retry(lag.Topic, p, g.Group), Items: a.space.RetryItems(lag.Topic, p, g.Group)})
		}
		out[p] = k
	}
	return out
}

func topicMemoryUse(lag TopicLag, mem []inspect.PartitionMemory) TopicMemoryUse {
	u := TopicMemoryUse{Topic: lag.Topic}
	for _, m := range mem {
		u.Entries += m.Entries
		u.StreamBytes += m.StreamBytes
		u.DeadLetters += m.DeadLetters
		u.DeadLetterBytes += m.DeadLetterBytes
	}
	for i, g := range lag.Groups {
		u.Groups = append(u.Groups, groupMemory(lag.Topic, g, i, mem))
	}
	sort.SliceStable(u.Groups, func(i, j int) bool { return u.Groups[i].Bytes() > u.Groups[j].Bytes() })
	return u
}

// groupMemory is what g (the i-th group of its TopicLag) holds back on the partitions of mem.
func groupMemory(topic string, g GroupLag, i int, mem []inspect.PartitionMemory) GroupMemory {
	gm := GroupMemory{Topic: topic, Group: g.Group}
	byPartition := map[int]PartitionLag{}
	for _, p := range g.Partitions {
		byPartition[p.Partition] = p
	}
	for p, m := range mem {
		h := PartitionMemoryHold{Partition: p}
		if l, ok := byPartition[p]; ok {
			h.Unacked = min(l.Lag+l.Pending, m.Entries)
			h.UnackedBytes = int64(math.Round(float64(h.Unacked) * m.EntryBytes()))
		}
		if i < len(m.Retries) {
			h.Retries, h.RetryBytes = m.Retries[i].Count, m.Retries[i].Bytes
		}
		if h.Unacked > 0 || h.Retries > 0 {
			gm.add(h)
		}
	}
	return gm
}

func (g *GroupMemory) add(h PartitionMemoryHold) {
	g.Partitions = append(g.Partitions, h)
	g.Unacked += h.Unacked
	g.UnackedBytes += h.UnackedBytes
	g.Retries += h.Retries
	g.RetryBytes += h.RetryBytes
}

// SizeText is n bytes for a person, in the unit of its size: "24.1 MiB", "310 B".
func SizeText(n int64) string { return sizeText(n, n) }
