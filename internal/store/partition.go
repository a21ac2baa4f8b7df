// Package store is the engine's way into storage. A Partition is every step one member takes
// on a partition it owns for its group (acks, claims, retries, dead letters, replays, the
// moves of due retries and delays, retention, payloads, the outage record), built once when
// the member takes the partition from the client, the partition's keys, the lease fence and
// the member's name: the engine's components call its methods and name no key, fence or
// script themselves. Where a server offers a step natively, the Partition chooses between
// its native command and its Lua step; both give one behaviour.
//
// A step that fails on a broken connection has the client reload its view of the servers
// (a Cluster's slots, a Sentinel's master) before the error is returned.
package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/dlq"
	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/outage"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retention"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Partition is one owned partition's storage steps for one group. Safe for concurrent use.
type Partition struct {
	rdb    redis.UniversalClient
	keys   keys.Partition
	fence  fence.Fence
	member string
}

// NewPartition is the store of partition k, leased with f, for member.
func NewPartition(rdb redis.UniversalClient, k keys.Partition, f fence.Fence, member string) *Partition {
	return &Partition{rdb: rdb, keys: k, fence: f, member: member}
}

// Keys are the partition's keys.
func (s *Partition) Keys() keys.Partition { return s.keys }

// Fence is the lease fence of every fenced step.
func (s *Partition) Fence() fence.Fence { return s.fence }

// failed has the client reload its view of the servers when err is a broken connection, and
// returns err.
func (s *Partition) failed(ctx context.Context, err error) error {
	if err != nil {
		server.ReloadOnConnError(ctx, s.rdb, err)
	}
	return err
}

// entry is entry id of what the group reads, for a fenced settle step.
func (s *Partition) entry(id string) fence.Entry {
	return fence.Entry{Fence: s.fence, Stream: s.keys.Read, Group: s.keys.Group, ID: id}
}

// consumer is this member as a consumer of what the group reads.
func (s *Partition) consumer() stream.Consumer {
	return stream.Consumer{Stream: s.keys.Read, Group: s.keys.Group, Name: s.member}
}

// Ack is one ack batch: the ack-delete policy, how long an ack set lives, the commit
// frontier it may record ("" none) and the entries.
type Ack struct {
	Policy    string
	AckSetTTL time.Duration
	Frontier  string
	Entries   []stream.Acked
}

// Ack acknowledges a batch in one fenced step; fence.ErrLeaseLost when the lease is lost.
func (s *Partition) Ack(ctx context.Context, a Ack) error {
	k := s.keys
	return s.failed(ctx, stream.Ack(ctx, s.rdb, stream.AckBatch{
		Keys:  stream.AckKeys{Lease: k.Lease, Stream: k.Read, Commit: k.Commit, PayloadIndex: k.PayloadIndex},
		Token: s.fence.Token, Group: k.Group, Policy: a.Policy, AckSetTTL: a.AckSetTTL, Frontier: a.Frontier, Entries: a.Entries,
	}))
}

// Claim moves up to count of the group's pending entries idle for minIdle, from start, to
// this member; it returns them in id order and where to go on ("0-0": done).
func (s *Partition) Claim(ctx context.Context, minIdle time.Duration, start string, count int64) ([]stream.Entry, string, error) {
	es, next, err := stream.Claim(ctx, s.rdb, s.consumer(), minIdle, start, count)
	return es, next, s.failed(ctx, err)
}

// ClaimOthers moves the entries other consumers of the group hold pending to this member.
func (s *Partition) ClaimOthers(ctx context.Context, count int64) ([]stream.Entry, error) {
	es, err := stream.ClaimOthers(ctx, s.rdb, s.consumer(), count)
	return es, s.failed(ctx, err)
}

// DeliveryCounts are the delivery counts of the group's pending ids in [first, last].
func (s *Partition) DeliveryCounts(ctx context.Context, first, last string, count int64) (map[string]int64, error) {
	counts, err := stream.DeliveryCounts(ctx, s.rdb, s.consumer(), first, last, count)
	return counts, s.failed(ctx, err)
}

// Requeue appends a retry (its fields) at once and acks entry id, in one fenced step; held
// reports that the group held id.
func (s *Partition) Requeue(ctx context.Context, id string, fields []string) (held bool, err error) {
	_, held, err = retry.Requeue(ctx, s.rdb, s.entry(id), fields)
	return held, s.failed(ctx, err)
}

// Schedule parks a retry item in the group's retry set until due and acks entry id, in one
// fenced step; held reports that the group held id.
func (s *Partition) Schedule(ctx context.Context, id string, due time.Time, item retry.Item) (held bool, err error) {
	k := s.keys
	held, err = retry.Schedule(ctx, s.rdb, s.entry(id),
		retry.Parked{ZSet: k.Retry, Items: k.RetryItems, ItemID: retry.NewItemID(), Due: due, Item: item})
	return held, s.failed(ctx, err)
}

// DeadLetter writes rec to the partition's DLQ and acks entry id, in one fenced step; held
// reports that the group held id.
func (s *Partition) DeadLetter(ctx context.Context, id string, rec dlq.Record) (held bool, err error) {
	_, held, err = dlq.Add(ctx, s.rdb, s.entry(id), s.keys.DLQ, rec)
	return held, s.failed(ctx, err)
}

// Replay appends dead letter id (a DLQ entry the group reads, rebuilt as entry) back to the
// partition and acks it, deleting it from the DLQ when drop, in one fenced step.
func (s *Partition) Replay(ctx context.Context, id string, entry dlq.Replayed, drop bool) error {
	f := s.fence
	_, err := dlq.Replay(ctx, s.rdb, dlq.ReplayArgs{
		DLQStream: s.keys.Read, Stream: s.keys.Stream, ID: id, Delete: drop, Fence: &f, Group: s.keys.Group, Entry: entry,
	})
	return s.failed(ctx, err)
}

// Drop acks dead letter id and deletes it from the DLQ, in one fenced step; false when it
// was gone.
func (s *Partition) Drop(ctx context.Context, id string) (bool, error) {
	deleted, err := dlq.Drop(ctx, s.rdb, s.entry(id))
	return deleted, s.failed(ctx, err)
}

// RetrySet is the group's retry set on the partition; DelaySet the partition's publish-time
// delays (every group's).
func (s *Partition) RetrySet() retry.Set {
	k := s.keys
	return retry.Set{ZSet: k.Retry, Items: k.RetryItems, Stream: k.Stream, Partition: k.Index, Group: k.Group}
}

// DelaySet is the partition's set of publish-time delays.
func (s *Partition) DelaySet() retry.Set {
	k := s.keys
	return retry.Set{ZSet: k.Delay, Items: k.DelayItems, Stream: k.Stream, Partition: k.Index}
}

// Move appends up to limit due items of set to the partition, in one fenced step.
func (s *Partition) Move(ctx context.Context, set retry.Set, limit int) (retry.Moved, error) {
	res, err := retry.Move(ctx, s.rdb, s.fence, set, limit)
	return res, s.failed(ctx, err)
}

// HandBack appends an item of set that belongs to partition p (another partition of the
// topic) there with a plain XADD, then removes it from the set: at least once.
func (s *Partition) HandBack(ctx context.Context, set retry.Set, p int, h retry.Handed) error {
	if err := stream.Append(ctx, s.rdb, s.keys.Sibling(p), h.Values); err != nil {
		return s.failed(ctx, err)
	}
	return s.failed(ctx, retry.Forget(ctx, s.rdb, set, h.ID))
}

// LoadPayload reads an offloaded payload of the partition; payload.ErrMissing when it is gone.
func (s *Partition) LoadPayload(ctx context.Context, ref string) (string, error) {
	data, err := payload.Get(ctx, s.rdb, s.keys.Payload(ref))
	return data, s.failed(ctx, err)
}

// MarkSeen records the group live on the partition at now; since is when retention had left
// it out for its group expiry (zero: it had not).
func (s *Partition) MarkSeen(ctx context.Context, now time.Time) (since time.Time, err error) {
	since, err = retention.MarkSeen(ctx, s.rdb, s.keys.Stream, s.keys.Group, now)
	return since, s.failed(ctx, err)
}

// Trim applies one retention rule to the partition.
func (s *Partition) Trim(ctx context.Context, rule retention.Rule) (retention.Trimmed, error) {
	res, err := retention.Trim(ctx, s.rdb, s.keys.Stream, s.keys.TrimLoss, rule)
	return res, s.failed(ctx, err)
}

// TakeLosses reads and resets how many of the group's entries a hard cap removed unacked.
func (s *Partition) TakeLosses(ctx context.Context) (int64, error) {
	n, err := retention.TakeLosses(ctx, s.rdb, s.keys.TrimLoss, s.keys.Group)
	return n, s.failed(ctx, err)
}

// PruneConsumers removes the group's consumers on the partition that belong to no live
// member, hold nothing pending and were idle for at least minIdle.
func (s *Partition) PruneConsumers(ctx context.Context, minIdle time.Duration, live []string) ([]string, error) {
	names, err := stream.PruneConsumers(ctx, s.rdb, s.keys.Stream, s.keys.Group, minIdle, live)
	return names, s.failed(ctx, err)
}

// TrimDLQBefore removes the partition's dead letters older than cutoff.
func (s *Partition) TrimDLQBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	n, err := retention.TrimOlderHard(ctx, s.rdb, s.keys.DLQ, cutoff)
	return n, s.failed(ctx, err)
}

// TrimDLQLen keeps at most maxLen of the partition's dead letters.
func (s *Partition) TrimDLQLen(ctx context.Context, maxLen int64) (int64, error) {
	n, err := retention.TrimLen(ctx, s.rdb, s.keys.DLQ, maxLen)
	return n, s.failed(ctx, err)
}

// SweepOrphans deletes up to limit offloaded payloads, indexed before olderThan after
// cursor, whose entry is gone; it returns how many and the next cursor (0: the index is done).
func (s *Partition) SweepOrphans(ctx context.Context, olderThan time.Time, cursor, limit int64) (int, int64, error) {
	k := s.keys
	n, next, err := retention.SweepOrphans(ctx, s.rdb, retention.Sweep{
		Stream: k.Stream, Index: k.PayloadIndex, Key: k.Payload, OlderThan: olderThan, Cursor: cursor, Limit: limit,
	})
	return n, next, s.failed(ctx, err)
}

// WriteOutage records the group's downstream outage on the partition for ttl.
func (s *Partition) WriteOutage(ctx context.Context, rec outage.Record, ttl time.Duration) error {
	return s.failed(ctx, outage.Write(ctx, s.rdb, s.keys.Outage, rec, ttl))
}

// ReadOutage reads the group's outage record on the partition (nil: none).
func (s *Partition) ReadOutage(ctx context.Context) (*outage.Record, error) {
	recs, err := outage.Read(ctx, s.rdb, []string{s.keys.Outage})
	if err != nil {
		return nil, s.failed(ctx, err)
	}
	return recs[0], nil
}

// ClearOutage removes the group's outage record on the partition.
func (s *Partition) ClearOutage(ctx context.Context) error {
	return s.failed(ctx, outage.Clear(ctx, s.rdb, s.keys.Outage))
}

// Reader is one member's reads of its group: a read round over the partitions it owns.
type Reader struct {
	rdb           redis.UniversalClient
	group, member string
}

// NewReader is member's reader of group.
func NewReader(rdb redis.UniversalClient, group, member string) *Reader {
	return &Reader{rdb: rdb, group: group, member: member}
}

// Read runs one read round over streams, each after the last id it received, up to count
// entries a stream, blocking up to block (< 0: no BLOCK): see stream.Read.
func (r *Reader) Read(ctx context.Context, streams, after []string, count int64, block time.Duration) (lost, fresh []stream.Batch, stray map[string]bool, err error) {
	lost, fresh, stray, err = stream.Read(ctx, r.rdb, stream.ReadArgs{
		Group: r.group, Consumer: r.member, Streams: streams, After: after, Count: count, Block: block,
	})
	if err != nil && ctx.Err() == nil {
		server.ReloadOnConnError(ctx, r.rdb, err)
	}
	return lost, fresh, stray, err
}
