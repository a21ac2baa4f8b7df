package admin

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/streamid"
)

// PartitionInfo describes one partition stream of a topic.
type PartitionInfo struct {
	Partition int
	Stream    string // the partition's stream key
	Length    int64
	// FirstID and LastID are the ids of the oldest and newest entries ("" when empty).
	FirstID, LastID string
	Groups          int // consumer groups registered on the stream
	DLQLength       int64
}

// QueueInfo aggregates a topic over its partitions (the seed's queue stats).
type QueueInfo struct {
	Topic      string
	Partitions int
	Length     int64 // summed over partitions
	// FirstID is the smallest first id and LastID the greatest last id over partitions.
	FirstID, LastID string
	Groups          int   // the most groups any partition has (the seed's "group count max")
	DLQLength       int64 // summed over partitions
	PerPartition    []PartitionInfo
}

// QueueInfo reads the length, first and last ids, group count and DLQ length of every
// partition of topic in one pipeline (XINFO STREAM and XLEN) and aggregates them. A partition
// never written reads as empty.
func (a *Admin) QueueInfo(ctx context.Context, topic string) (QueueInfo, error) {
	n, err := a.partitions(ctx, topic)
	if err != nil {
		return QueueInfo{}, err
	}
	infos := make([]*redis.XInfoStreamCmd, n)
	dlqs := make([]*redis.IntCmd, n)
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range n {
			infos[p] = pipe.XInfoStream(ctx, a.space.PartitionStream(topic, p))
			dlqs[p] = pipe.XLen(ctx, a.space.DLQ(topic, p))
		}
		return nil
	})
	q := QueueInfo{Topic: topic, Partitions: n, PerPartition: make([]PartitionInfo, 0, n)}
	for p := range n {
		pi, err := a.partitionInfo(topic, p, infos[p], dlqs[p])
		if err != nil {
			return QueueInfo{}, err
		}
		q.add(pi)
	}
	return q, nil
}

func (a *Admin) partitionInfo(topic string, p int, info *redis.XInfoStreamCmd, dlq *redis.IntCmd) (PartitionInfo, error) {
	pi := PartitionInfo{Partition: p, Stream: a.space.PartitionStream(topic, p)}
	if err := info.Err(); err != nil && !noSuchKey(err) {
		return pi, fmt.Errorf("info of %s: %w", pi.Stream, err)
	}
	if err := dlq.Err(); err != nil {
		return pi, fmt.Errorf("length of %s: %w", a.space.DLQ(topic, p), err)
	}
	pi.DLQLength = dlq.Val()
	if v := info.Val(); v != nil { // nil: never written
		pi.Length, pi.Groups = v.Length, int(v.Groups)
		pi.FirstID, pi.LastID = v.FirstEntry.ID, v.LastEntry.ID
	}
	return pi, nil
}

func (q *QueueInfo) add(pi PartitionInfo) {
	q.PerPartition = append(q.PerPartition, pi)
	q.Length += pi.Length
	q.DLQLength += pi.DLQLength
	q.Groups = max(q.Groups, pi.Groups)
	if pi.FirstID != "" && (q.FirstID == "" || streamid.Less(pi.FirstID, q.FirstID)) {
		q.FirstID = pi.FirstID
	}
	if pi.LastID != "" && (q.LastID == "" || streamid.Less(q.LastID, pi.LastID)) {
		q.LastID = pi.LastID
	}
}
