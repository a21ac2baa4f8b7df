package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReadArgs is one read round of consumer in group: the streams, the last id each received,
// the most entries per stream, and how long to block (< 0: no BLOCK).
type ReadArgs struct {
	Group, Consumer string
	Streams, After  []string
	Count           int64
	Block           time.Duration
}

// Read is one read round for consumer over streams. In one pipeline it first re-reads the
// consumer's own pending entries after after[i] (the last id it received from streams[i]),
// then reads up to count new entries per stream, blocking up to block when none is there
// (block < 0: no BLOCK). The first read finds entries whose reply was lost: Redis ran an
// earlier read for the consumer and the reply never arrived, or go-redis sent the read again
// after a dropped connection; without it they would wait for the pending scan and come out
// of order. Entries deleted from a stream while pending come back with nil Values.
//
// It also reports the streams where, once the reads ran, another consumer holds pending
// entries (stray): the member owns those partitions and claimed their pending entries when
// it took them, so these came from a read of the previous owner that Redis ran after the
// takeover (sent before its lease lapsed, delayed on the way). They may be older than what
// this round returned for such a stream, so the caller claims them before taking more.
func Read(ctx context.Context, rdb redis.UniversalClient, r ReadArgs) (lost, fresh []Batch, stray map[string]bool, err error) {
	group, consumer, streams, after, count, block := r.Group, r.Consumer, r.Streams, r.After, r.Count, r.Block
	newest := make([]string, 0, 2*len(streams))
	newest = append(newest, streams...)
	for range streams {
		newest = append(newest, ">")
	}
	if block >= 0 {
		block = pipelineBlock(rdb, block)
	}
	var lostCmd, freshCmd *redis.XStreamSliceCmd
	pending := make([]*redis.XPendingCmd, len(streams))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		lostCmd = p.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: consumer, Streams: append(append([]string{}, streams...), after...), Count: count, Block: -1,
		})
		freshCmd = p.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: consumer, Streams: newest, Count: count, Block: block,
		})
		// After the reads (Redis runs them in order, the blocking one included): a stale
		// read that ran before this round's reply is seen here.
		for i, s := range streams {
			pending[i] = p.XPending(ctx, s, group)
		}
		return nil
	})
	if stray, err = strays(streams, pending, consumer); err != nil {
		return nil, nil, nil, fmt.Errorf("pending summary of group %q: %w", group, err)
	}
	if lost, err = readResult(lostCmd); err != nil {
		return nil, nil, nil, fmt.Errorf("read pending of group %q: %w", group, err)
	}
	if fresh, err = readResult(freshCmd); err != nil {
		return nil, nil, nil, fmt.Errorf("read group %q: %w", group, err)
	}
	return lost, fresh, stray, nil
}

// strays lists the streams where a consumer other than consumer holds pending entries.
func strays(streams []string, pending []*redis.XPendingCmd, consumer string) (map[string]bool, error) {
	var out map[string]bool
	for i, cmd := range pending {
		sum, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sum.Count > sum.Consumers[consumer] {
			if out == nil {
				out = map[string]bool{}
			}
			out[streams[i]] = true
		}
	}
	return out, nil
}

func readResult(cmd *redis.XStreamSliceCmd) ([]Batch, error) {
	res, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Batch, len(res))
	for i, xs := range res {
		out[i] = Batch{Stream: xs.Stream, Entries: entries(xs.Messages)}
	}
	return out, nil
}

// pipelineBlock keeps a blocking read inside a pipeline within the client's read timeout:
// go-redis extends the timeout for a blocking command sent alone, not in a pipeline.
func pipelineBlock(rdb redis.UniversalClient, block time.Duration) time.Duration {
	var timeout time.Duration
	switch c := rdb.(type) {
	case *redis.Client:
		timeout = c.Options().ReadTimeout
	case *redis.ClusterClient:
		timeout = c.Options().ReadTimeout
	case *redis.Ring:
		timeout = c.Options().ReadTimeout
	}
	if timeout > 0 && block > timeout/2 {
		block = timeout / 2
	}
	if block < time.Millisecond {
		return time.Millisecond // BLOCK counts whole milliseconds, and BLOCK 0 waits for ever
	}
	return block
}

// Consumer is one consumer of a group on one stream.
type Consumer struct {
	Stream, Group, Name string
}

// Claim moves up to count pending entries idle for at least minIdle, starting at start, to
// consumer (XAUTOCLAIM). It returns the claimed entries in id order and the cursor to continue
// from ("0-0" when the scan is complete). Entries deleted from the stream are dropped from the
// pending list by Redis and not returned.
func Claim(ctx context.Context, rdb redis.UniversalClient, c Consumer, minIdle time.Duration, start string, count int64) ([]Entry, string, error) {
	msgs, next, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: c.Stream, Group: c.Group, Consumer: c.Name, MinIdle: minIdle, Start: start, Count: count,
	}).Result()
	if err != nil {
		return nil, "", fmt.Errorf("claim pending of %s: %w", c.Stream, err)
	}
	return entries(msgs), next, nil
}

// ClaimOthers moves to consumer the pending entries of stream that other consumers hold, and
// returns them in id order (entries deleted from the stream meanwhile are dropped by Redis).
// Unlike Claim it never touches the consumer's own entries, which it may be acking.
func ClaimOthers(ctx context.Context, rdb redis.UniversalClient, c Consumer, count int64) ([]Entry, error) {
	stream, group, consumer := c.Stream, c.Group, c.Name
	var out []Entry
	start := "-"
	for {
		pending, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: stream, Group: group, Start: start, End: "+", Count: count,
		}).Result()
		if err != nil {
			return nil, fmt.Errorf("read pending of %s: %w", stream, err)
		}
		var ids []string
		for _, p := range pending {
			if p.Consumer != consumer {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) > 0 {
			msgs, err := rdb.XClaim(ctx, &redis.XClaimArgs{
				Stream: stream, Group: group, Consumer: consumer, Messages: ids,
			}).Result()
			if err != nil {
				return nil, fmt.Errorf("claim pending of %s: %w", stream, err)
			}
			out = append(out, entries(msgs)...)
		}
		if int64(len(pending)) < count {
			return out, nil
		}
		start = "(" + pending[len(pending)-1].ID
	}
}

// DeliveryCounts returns the delivery count of each of c's group's pending ids in [first,
// last], at most count of them.
func DeliveryCounts(ctx context.Context, rdb redis.UniversalClient, c Consumer, first, last string, count int64) (map[string]int64, error) {
	res, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: c.Stream, Group: c.Group, Start: first, End: last, Count: count,
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("read pending of %s: %w", c.Stream, err)
	}
	out := make(map[string]int64, len(res))
	for _, p := range res {
		out[p.ID] = p.RetryCount
	}
	return out, nil
}
