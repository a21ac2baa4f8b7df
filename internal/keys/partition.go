package keys

import "strings"

// RegisteredGroups is the set, beside stream and in its slot, of the consumer groups ever
// created on it by streamq: a group destroyed under its members (XGROUP DESTROY, a flush)
// stays registered until admin.DeleteGroup removes it, so the payloads and ack-delete
// decisions that must wait for every group still wait for it (see internal/stream/lua/ack.lua).
func RegisteredGroups(stream string) string { return stream + ":groups" }

// Regrouped is the hash, beside stream and in its slot, of the groups a member recreated
// there lately (group -> "token|position", expiring after a minute): a recreation whose
// reply was lost and that the client sent again is still reported as made, once.
func Regrouped(stream string) string { return stream + ":regrouped" }

// GroupSeen is the hash, beside stream and in its slot, of when each consumer group was last
// live on the partition: field SeenField(g) -> Unix ms, written by the group's lease holder
// every trim interval (and by the first trim that finds a registered group without one), and
// field ExpiredField(g) -> Unix ms since which retention leaves the group out because it was
// not seen for a group expiry (set by the trim, removed when the group is live again).
func GroupSeen(stream string) string { return stream + ":seen" }

// SeenField is group g's last-live field of GroupSeen.
func SeenField(g string) string { return "seen:" + g }

// ExpiredField is group g's expired-since field of GroupSeen.
func ExpiredField(g string) string { return "expired:" + g }

// ReplayMarks is the hash, beside a DLQ stream and in its slot, of the dead letters replayed
// from it: DLQ id -> "ms|new stream id" of the latest replay. It expires a week after the
// latest replay from that DLQ.
func ReplayMarks(dlqStream string) string { return dlqStream + ":replayed" }

// DLQCommit is the commit-frontier hash of a group consuming partition p's DLQ as a topic.
func (s Space) DLQCommit(t string, p int) string { return s.Commit(t, p) + ":dlq" }

// DLQMemberCaps is the hash (consumer -> capabilities) beside DLQMembers.
func (s Space) DLQMemberCaps(t, g string) string { return s.DLQMembers(t, g) + ":caps" }

// DLQMemberInstances is the hash (static member -> instance record) beside DLQMembers.
func (s Space) DLQMemberInstances(t, g string) string { return s.DLQMembers(t, g) + ":static" }

// Partition is every key one group uses on one partition, built once when the group's
// member takes the partition. Read, Lease and Commit are those of what the group reads:
// the partition's stream, or its DLQ when the group consumes the DLQ as a topic (DLQView).
// All share the partition's hash tag.
type Partition struct {
	Topic   string
	Index   int
	Group   string
	DLQView bool

	Read   string // the stream the group reads
	Lease  string // the group's lease on Read
	Commit string // the group's commit frontier on Read

	Stream       string // the partition's stream (where replays and hand-backs go)
	DLQ          string // the partition's dead-letter stream
	Retry        string // the group's retry zset
	RetryItems   string
	Delay        string // the partition's publish-time delay zset
	DelayItems   string
	PayloadIndex string
	TrimLoss     string
	Outage       string // the group's outage record on Read (package outage)

	space Space
}

// Partition returns the keys group g uses on partition p of topic t; dlqView when g
// consumes the partition's DLQ as a topic.
func (s Space) Partition(t string, p int, g string, dlqView bool) Partition {
	k := Partition{
		Topic: t, Index: p, Group: g, DLQView: dlqView,
		Stream: s.PartitionStream(t, p), DLQ: s.DLQ(t, p),
		Retry: s.Retry(t, p, g), RetryItems: s.RetryItems(t, p, g),
		Delay: s.Delay(t, p), DelayItems: s.DelayItems(t, p),
		PayloadIndex: s.PayloadIndex(t, p), TrimLoss: s.TrimLoss(t, p),
		space: s,
	}
	k.Read, k.Lease, k.Commit = k.Stream, s.Lease(t, p, g), s.Commit(t, p)
	if dlqView {
		k.Read, k.Lease, k.Commit = k.DLQ, s.DLQLease(t, p, g), s.DLQCommit(t, p)
	}
	k.Outage = s.Outage(t, p, g)
	return k
}

// Acks is the set of groups that acked entry id of the partition.
func (k Partition) Acks(id string) string { return k.space.Acks(k.Topic, k.Index, id) }

// Payload is the key of an offloaded payload of the partition.
func (k Partition) Payload(ref string) string { return k.space.Payload(k.Topic, k.Index, ref) }

// IsLease reports whether key is a partition lease of some group (of a topic or of its DLQ).
// Deleting a topic's leases first stops every fenced write of its running members.
func (s Space) IsLease(key string) bool {
	return strings.HasPrefix(key, s.Control+":lease:") || strings.HasPrefix(key, s.Control+":dlqlease:")
}

// Outage is group g's record of a downstream outage on partition p of topic t (package
// outage): written by the partition's lease holder while it waits the outage out, gone when
// it resumes, expiring when the holder is gone.
func (s Space) Outage(t string, p int, g string) string {
	return s.Control + ":outage:" + Tag(t, p) + ":" + g
}

// GroupPause marks group g on topic t as paused by an operator (admin.PauseGroup): its
// value is the pause's start, in Unix ms. Every member of the group stops delivering while
// it exists; it carries the topic's tag, so it survives member restarts and stays in the
// topic's slot.
func (s Space) GroupPause(t, g string) string { return s.Control + ":paused:{" + t + "}:" + g }

// DLQGroupPause is GroupPause for group g consuming the DLQ of topic t as a topic.
func (s Space) DLQGroupPause(t, g string) string { return s.Control + ":dlqpaused:{" + t + "}:" + g }

// RetryIndex is the zset, beside stream and in its slot, of the ids of group g's retry
// entries on stream (entries carrying x-retry-group g, which every other group skips):
// members streamid.Key(id), all of score 0, so a range of ids is one ZLEXCOUNT. The scripts
// that append such an entry (a requeued or moved retry, a replay to one group) add its id and
// drop the members below the stream's first entry; admin.DeleteGroup deletes it. The lag
// readers count it (internal/lag).
func RetryIndex(stream, g string) string { return stream + ":retries:" + g }

// RetryCount is the hash, beside stream and in its slot, of the retry entries ever appended
// to stream: group -> count. With XINFO STREAM entries-added it tells the messages published
// from the retries (internal/lag).
func RetryCount(stream string) string { return stream + ":retrycount" }

// Sibling is the stream of partition p of the same topic (where a parked item that belongs to
// another partition goes).
func (k Partition) Sibling(p int) string { return k.space.PartitionStream(k.Topic, p) }
