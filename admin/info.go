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
	// OverMaxLen is how many entries the partition holds beyond the topic's MaxLen
	// (Length - MaxLen; 0 when within it or when length retention is off): entries a group
	// still needs (Holder), or that the next trim removes.
	OverMaxLen int64
	// Holder is the consumer group whose position stops the trim while the partition is over
	// MaxLen: of the groups registered on it, the one that needs the oldest entry (its oldest
	// pending entry, else the one after its last delivered), and HolderNeeds is that id. Both
	// are "" when nothing is over MaxLen, the partition has no group, every group is caught
	// up, or the trim policy is TrimHard (what is over then goes at the next trim). The
	// holder is found from the groups' positions alone: one behind by fewer than MaxLen
	// entries holds back none of the entries over MaxLen (the next trim removes them) but is
	// named all the same.
	Holder, HolderNeeds string
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
	// Retention is the topic's length retention, which OverMaxLen is measured against.
	Retention    LengthRetention
	OverMaxLen   int64 // summed over partitions
	PerPartition []PartitionInfo
}

// infoReads are the per-partition replies QueueInfo pipelines.
type infoReads struct {
	info   *redis.XInfoStreamCmd
	dlq    *redis.IntCmd
	groups *redis.XInfoGroupsCmd
}

// QueueInfo reads the topic's metadata (partition count, length retention), then the length,
// first and last ids, consumer groups and DLQ length of every partition in one pipeline
// (XINFO STREAM, XINFO GROUPS and XLEN) and aggregates them. For the partitions over MaxLen it
// names the group holding them (Holder), which takes one more pipeline (XPENDING summaries)
// when a group has pending entries there. A partition never written reads as empty.
func (a *Admin) QueueInfo(ctx context.Context, topic string) (QueueInfo, error) {
	meta, err := a.topicMeta(ctx, topic)
	if err != nil {
		return QueueInfo{}, err
	}
	n := meta.Count
	reads := a.readInfo(ctx, topic, n)
	q := QueueInfo{Topic: topic, Partitions: n, Retention: lengthRetention(meta), PerPartition: make([]PartitionInfo, 0, n)}
	groups := make([][]redis.XInfoGroup, n)
	for p := range n {
		pi, err := a.partitionInfo(topic, p, reads[p])
		if err != nil {
			return QueueInfo{}, err
		}
		pi.OverMaxLen = q.Retention.over(pi.Length)
		groups[p] = reads[p].groups.Val()
		q.add(pi)
	}
	if err := a.setHolders(ctx, &q, groups); err != nil {
		return QueueInfo{}, fmt.Errorf("retention holders of %q: %w", topic, err)
	}
	return q, nil
}

func (a *Admin) readInfo(ctx context.Context, topic string, n int) []infoReads {
	reads := make([]infoReads, n)
	_, _ = a.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p := range n {
			stream := a.space.PartitionStream(topic, p)
			reads[p] = infoReads{
				info: pipe.XInfoStream(ctx, stream), dlq: pipe.XLen(ctx, a.space.DLQ(topic, p)),
				groups: pipe.XInfoGroups(ctx, stream),
			}
		}
		return nil
	})
	return reads
}

func (a *Admin) partitionInfo(topic string, p int, r infoReads) (PartitionInfo, error) {
	pi := PartitionInfo{Partition: p, Stream: a.space.PartitionStream(topic, p)}
	for _, err := range []error{r.info.Err(), r.groups.Err()} {
		if err != nil && !noSuchKey(err) {
			return pi, fmt.Errorf("info of %s: %w", pi.Stream, err)
		}
	}
	if err := r.dlq.Err(); err != nil {
		return pi, fmt.Errorf("length of %s: %w", a.space.DLQ(topic, p), err)
	}
	pi.DLQLength = r.dlq.Val()
	if v := r.info.Val(); v != nil { // nil: never written
		pi.Length, pi.Groups = v.Length, int(v.Groups)
		pi.FirstID, pi.LastID = v.FirstEntry.ID, v.LastEntry.ID
	}
	return pi, nil
}

func (q *QueueInfo) add(pi PartitionInfo) {
	q.PerPartition = append(q.PerPartition, pi)
	q.Length += pi.Length
	q.DLQLength += pi.DLQLength
	q.OverMaxLen += pi.OverMaxLen
	q.Groups = max(q.Groups, pi.Groups)
	if pi.FirstID != "" && (q.FirstID == "" || streamid.Less(pi.FirstID, q.FirstID)) {
		q.FirstID = pi.FirstID
	}
	if pi.LastID != "" && (q.LastID == "" || streamid.Less(q.LastID, pi.LastID)) {
		q.LastID = pi.LastID
	}
}
