// Package retry is what becomes of a nacked message: the one decision on a delivery's
// outcome (Decide: ack, retry now or later, dead letter, replay, drop, redeliver, wait out a
// downstream outage), the outage state machine of a partition, snoozes; and what a partition
// gets later than it is written: a consumer group's retries (requeued at once, or parked in
// the group's retry set until due) and publish-time delays (parked in the partition's delay
// set), the items they wait as, and the mover step that appends due items back to their
// partition. The Lua steps that requeue or park a nacked entry ack the original in the same
// script.
package retry

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/fence"
	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
)

// DirectThreshold is the longest backoff that re-adds a retry to the partition at once
// instead of parking it in the retry set.
const DirectThreshold = 50 * time.Millisecond

var (
	//go:embed lua/requeue.lua
	requeueSrc string
	//go:embed lua/schedule.lua
	scheduleSrc string
	//go:embed lua/park.lua
	parkSrc string
	//go:embed lua/move.lua
	moveSrc string

	requeueScript  = script.New(requeueSrc)
	scheduleScript = script.New(scheduleSrc)
	parkScript     = script.New(parkSrc)
	moveScript     = script.New(moveSrc)
)

// Requeue appends fields as a new entry of e's stream and acks e, in one script; held
// reports that the group held e (the ack acked it). The retry is recorded in the group's
// retry index and count beside the stream (keys.RetryIndex, keys.RetryCount).
func Requeue(ctx context.Context, rdb redis.Scripter, e fence.Entry, fields []string) (string, bool, error) {
	f, stream, group, id := e.Fence, e.Stream, e.Group, e.ID
	args := make([]any, 0, 3+len(fields))
	args = append(args, f.Token, group, id)
	for _, s := range fields {
		args = append(args, s)
	}
	res, err := fence.Run(ctx, rdb, requeueScript, "requeue "+id+" on "+stream, []string{f.Key, stream, keys.RetryIndex(stream, group), keys.RetryCount(stream)}, args...)
	if err != nil {
		return "", false, err
	}
	newID, held := fence.Settled(res)
	return newID, held, nil
}

// Parked is an item parked in a retry or delay set (ZSet, with its items hash) until Due,
// under ItemID.
type Parked struct {
	ZSet, Items, ItemID string
	Due                 time.Time
	Item                Item
}

// Schedule parks p in the group's retry set and acks e, in one script; held reports that the
// group held e (the ack acked it).
func Schedule(ctx context.Context, rdb redis.Scripter, e fence.Entry, p Parked) (bool, error) {
	blob, err := p.Item.Encode()
	if err != nil {
		return false, err
	}
	res, err := fence.Run(ctx, rdb, scheduleScript, "schedule retry of "+e.ID+" on "+e.Stream,
		[]string{e.Fence.Key, e.Stream, p.ZSet, p.Items}, e.Fence.Token, e.Group, e.ID, p.ItemID, p.Due.UnixMilli(), blob)
	return res == int64(1), err
}

// LoadScripts loads the scripts used inside pipelines (EVALSHA needs them cached).
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	if err := parkScript.Load(ctx, rdb).Err(); err != nil {
		return fmt.Errorf("load park script: %w", err)
	}
	return nil
}

// Moved is what one move round did.
type Moved struct {
	Moved, Dropped int
	NextDue        time.Time // zero when the set is empty
	HandedBack     []Handed  // items for another partition, still in the set
}

// Handed is an item the mover could not append to its own partition: it belongs to
// Partition (the seed's reading of its partitionId: anything bad is 0).
type Handed struct {
	ID        string
	Partition int
	Values    map[string]any
}

// Set names a retry or delay set of one partition and where its items go.
type Set struct {
	ZSet, Items, Stream string
	Partition           int
	// Group is the group of a retry set: the retries moved are recorded in its retry index
	// and count beside Stream (keys.RetryIndex, keys.RetryCount). "" for a delay set.
	Group string
}

// Move appends up to limit due items of set to its stream, fenced by f.
func Move(ctx context.Context, rdb redis.Scripter, f fence.Fence, set Set, limit int) (Moved, error) {
	index, count := set.Stream, set.Stream
	if set.Group != "" {
		index, count = keys.RetryIndex(set.Stream, set.Group), keys.RetryCount(set.Stream)
	}
	res, err := fence.Run(ctx, rdb, moveScript, "move due items of "+set.ZSet,
		[]string{f.Key, set.ZSet, set.Items, set.Stream, index, count}, f.Token, set.Partition, limit, set.Group)
	if err != nil {
		return Moved{}, err
	}
	return parseMoved(res, set.ZSet)
}

func parseMoved(res any, zset string) (Moved, error) {
	arr, ok := res.([]any)
	if !ok || len(arr) != 4 {
		return Moved{}, fmt.Errorf("move due items of %s: unexpected reply %v", zset, res)
	}
	m := Moved{}
	moved, _ := arr[0].(int64)
	dropped, _ := arr[1].(int64)
	m.Moved, m.Dropped = int(moved), int(dropped)
	if next, _ := arr[2].(int64); next >= 0 {
		m.NextDue = time.UnixMilli(next)
	}
	back, _ := arr[3].([]any)
	for i := 0; i+2 < len(back); i += 3 {
		id, _ := back[i].(string)
		p, _ := back[i+1].(int64)
		fields, _ := back[i+2].([]any)
		m.HandedBack = append(m.HandedBack, Handed{ID: id, Partition: int(p), Values: pairs(fields)})
	}
	return m, nil
}

// pairs turns a flat field, value list into a map.
func pairs(flat []any) map[string]any {
	out := make(map[string]any, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		out[k] = flat[i+1]
	}
	return out
}

// Forget removes item id from a set (after it was appended elsewhere).
func Forget(ctx context.Context, rdb redis.UniversalClient, set Set, id string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, set.ZSet, id)
		p.HDel(ctx, set.Items, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget item %s of %s: %w", id, set.ZSet, err)
	}
	return nil
}
