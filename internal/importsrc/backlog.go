package importsrc

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/stream"
)

// Page is one page of a read in id order: up to Count ids after After ("" from the start),
// up to UpTo inclusive.
type Page struct {
	After, UpTo string
	Count       int64
}

// PendingPage lists a page of the pending entries of group on src, of every consumer, in id
// order (XPENDING).
func PendingPage(ctx context.Context, rdb redis.UniversalClient, src, group string, pg Page) ([]stream.Pending, error) {
	after, upTo, count := pg.After, pg.UpTo, pg.Count
	start := "-"
	if after != "" {
		start = "(" + after
	}
	res, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: src, Group: group, Start: start, End: upTo, Count: count}).Result()
	if err != nil {
		return nil, fmt.Errorf("pending of group %q on %q: %w", group, src, err)
	}
	out := make([]stream.Pending, len(res))
	for i, p := range res {
		out[i] = stream.Pending{ID: p.ID, Consumer: p.Consumer, Idle: p.Idle, Deliveries: p.RetryCount}
	}
	return out, nil
}

// Bodies reads the entries ids of src in one pipeline (XRANGE id id each), without touching
// any group: out[i] is ids[i]'s entry, with nil Values when it is gone from the stream
// (deleted or trimmed while pending).
func Bodies(ctx context.Context, rdb redis.UniversalClient, src string, ids []string) ([]stream.Entry, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(ids))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = pipe.XRange(ctx, src, id, id)
		}
		return nil
	})
	out := make([]stream.Entry, len(ids))
	for i, c := range cmds {
		msgs, err := c.Result()
		if err != nil {
			return nil, fmt.Errorf("read %s of %q: %w", ids[i], src, err)
		}
		out[i].ID = ids[i]
		if len(msgs) == 1 {
			out[i].Values = msgs[0].Values
		}
	}
	return out, nil
}

// Claim moves the pending entries ids of group on src to consumer, however long they have
// been idle (XCLAIM min-idle 0), and returns them in the order of ids: nil Values for an entry
// gone from the stream.
func Claim(ctx context.Context, rdb redis.UniversalClient, src, group, consumer string, ids []string) ([]stream.Entry, error) {
	msgs, err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: src, Group: group, Consumer: consumer, Messages: ids}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("claim pending of group %q on %q: %w", group, src, err)
	}
	got := make(map[string]map[string]any, len(msgs))
	for _, m := range msgs {
		got[m.ID] = m.Values
	}
	out := make([]stream.Entry, len(ids))
	for i, id := range ids {
		out[i] = stream.Entry{ID: id, Values: got[id]}
	}
	return out, nil
}

// ReadNew reads up to count entries of src that group has not delivered yet, as consumer
// (XREADGROUP ... STREAMS src >, not blocking): they become consumer's pending entries.
func ReadNew(ctx context.Context, rdb redis.UniversalClient, src, group, consumer string, count int64) ([]stream.Entry, error) {
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: group, Consumer: consumer, Streams: []string{src, ">"}, Count: count, Block: -1,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read group %q on %q: %w", group, src, err)
	}
	var out []stream.Entry
	for _, xs := range res {
		for _, m := range xs.Messages {
			out = append(out, stream.Entry{ID: m.ID, Values: m.Values})
		}
	}
	return out, nil
}

// After reads up to count entries of src after id after and up to end inclusive (XRANGE),
// without touching any group.
func After(ctx context.Context, rdb redis.UniversalClient, src, after, end string, count int64) ([]stream.Entry, error) {
	return stream.Range(ctx, rdb, src, "("+after, end, count)
}

// Ack acknowledges ids for group on src (XACK) and returns how many were pending.
func Ack(ctx context.Context, rdb redis.UniversalClient, src, group string, ids []string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := rdb.XAck(ctx, src, group, ids...).Result()
	if err != nil {
		return 0, fmt.Errorf("ack %d entries of group %q on %q: %w", len(ids), group, src, err)
	}
	return n, nil
}
