package admin

import (
	"context"
	"fmt"

	"github.com/streamq-dev/streamq/internal/inspect"
	"github.com/streamq-dev/streamq/internal/lag"
	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// PartitionInfo describes one partition stream of a topic.
type PartitionInfo struct {
	Partition int
	Stream    string // the partition's stream key
	// Length is the published messages the partition holds; Retries the retry entries it
	// holds besides (retries, and replays to one group: entries carrying x-retry-group, which
	// only that group delivers); Entries is both, the stream's XLEN.
	Length, Retries, Entries int64
	// FirstID and LastID are the ids of the oldest and newest entries ("" when empty).
	FirstID, LastID string
	Groups          int // consumer groups registered on the stream
	DLQLength       int64
	// OverMaxLen is how many entries the partition holds beyond the topic's MaxLen
	// (Entries - MaxLen; 0 when within it or when length retention is off): entries a group
	// still needs (Holder), or that the next trim removes.
	OverMaxLen int64
	// Holder is the consumer group whose position stops the trim while the partition is over
	// MaxLen: of the groups registered on it, the one that needs the oldest entry (its oldest
	// pending entry, else the one after its last delivered). HolderNeeds is that entry's id
	// when it is the partition's first entry (as usual: retention stops there), else the
	// position just after the last delivered id.
	// HeldBack is how many of the OverMaxLen entries it holds back: when Redis reports the
	// group's lag (XINFO GROUPS, Redis 7), what it still needs (its lag plus its pending
	// entries, a lower bound when it acks out of order) beyond MaxLen, at most OverMaxLen; a
	// group that needs no more than MaxLen entries holds none back (the next trim removes
	// what is over) and is not named. When Redis reports the lag unknown, the group is named
	// from its position alone and HeldBack is OverMaxLen (an upper bound). Holder and
	// HolderNeeds are "" and HeldBack 0 when nothing is over MaxLen, the partition has no
	// group, every group is caught up, or the trim policy is TrimHard (what is over then goes
	// at the next trim).
	Holder, HolderNeeds string
	HeldBack            int64
}

// QueueInfo aggregates a topic over its partitions (the queue's stats).
type QueueInfo struct {
	Topic      string
	Partitions int
	// Length is the published messages the partitions hold, Retries the retry entries, and
	// Entries both (see PartitionInfo), summed over partitions.
	Length, Retries, Entries int64
	// FirstID is the smallest first id and LastID the greatest last id over partitions.
	FirstID, LastID string
	Groups          int   // the most groups any partition has
	DLQLength       int64 // summed over partitions
	// Retention is the topic's length retention, which OverMaxLen is measured against.
	Retention    LengthRetention
	OverMaxLen   int64 // summed over partitions
	PerPartition []PartitionInfo
}

// QueueInfo reads the topic's metadata (partition count, length retention), then the length,
// first and last ids, consumer groups and DLQ length of every partition in one pipeline
// (XINFO STREAM, XINFO GROUPS and XLEN), and the retry entries they hold in a second (a
// ZLEXCOUNT per group of a partition's retry index, see TopicLag; only for the partitions
// that ever had a retry) and aggregates them. For the
// partitions over MaxLen it
// names the group holding them (Holder), which takes one more pipeline (XPENDING summaries)
// when a group has pending entries there. A partition never written reads as empty.
func (a *Admin) QueueInfo(ctx context.Context, topic string) (QueueInfo, error) {
	meta, err := a.topicMeta(ctx, topic)
	if err != nil {
		return QueueInfo{}, err
	}
	n := meta.Count
	reads, err := inspect.Partitions(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n), streams(a.space.DLQ, topic, 0, n))
	if err != nil {
		return QueueInfo{}, err
	}
	q := QueueInfo{Topic: topic, Partitions: n, Retention: lengthRetention(meta), PerPartition: make([]PartitionInfo, 0, n)}
	groups, infos, retried := make([][]stream.GroupInfo, n), make([]*stream.Info, n), make([][]stream.GroupInfo, n)
	for p, r := range reads {
		groups[p], infos[p] = r.Groups, r.Info
		if r.Retried {
			retried[p] = r.Groups
		}
	}
	held, err := lag.Held(ctx, a.rdb, streams(a.space.PartitionStream, topic, 0, n), infos, retried)
	if err != nil {
		return QueueInfo{}, err
	}
	for p, r := range reads {
		pi := a.partitionInfo(topic, p, r, held[p])
		pi.OverMaxLen = q.Retention.over(pi.Entries)
		q.add(pi)
	}
	if err := a.setHolders(ctx, &q, infos, groups); err != nil {
		return QueueInfo{}, fmt.Errorf("retention holders of %q: %w", topic, err)
	}
	return q, nil
}

func (a *Admin) partitionInfo(topic string, p int, r inspect.Partition, retries int64) PartitionInfo {
	pi := PartitionInfo{Partition: p, Stream: a.space.PartitionStream(topic, p), DLQLength: r.DLQLen}
	if v := r.Info; v != nil { // nil: never written
		pi.Entries, pi.Groups = v.Length, int(v.Groups)
		pi.Retries = min(retries, v.Length)
		pi.Length = v.Length - pi.Retries
		pi.FirstID, pi.LastID = v.FirstID, v.LastID
	}
	return pi
}

// setHolders sets Holder, HolderNeeds and HeldBack of every partition of q (holds over the
// partitions' XINFO STREAM and XINFO GROUPS).
func (a *Admin) setHolders(ctx context.Context, q *QueueInfo, infos []*stream.Info, groups [][]stream.GroupInfo) error {
	keys := streams(a.space.PartitionStream, q.Topic, 0, q.Partitions)
	hs, err := a.holds(ctx, q.Retention, keys, infos, groups)
	if err != nil {
		return err
	}
	for p, h := range hs {
		pi := &q.PerPartition[p]
		pi.Holder, pi.HolderNeeds, pi.HeldBack = h.group, h.needs, h.back
	}
	return nil
}

func (q *QueueInfo) add(pi PartitionInfo) {
	q.PerPartition = append(q.PerPartition, pi)
	q.Length += pi.Length
	q.Retries += pi.Retries
	q.Entries += pi.Entries
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
