package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrInvalidID reports Redis rejecting a stream id argument ("Invalid stream ID").
var ErrInvalidID = errors.New("invalid stream id")

// invalidID wraps err with ErrInvalidID when Redis rejected a stream id.
func invalidID(err error) error {
	if err != nil && redis.HasErrorPrefix(err, "Invalid stream ID") {
		return fmt.Errorf("%w: %w", ErrInvalidID, err)
	}
	return err
}

// Range reads up to count entries of stream from start to end inclusive ("-", "+", "(id"
// excludes id), oldest first (XRANGE). A bad id is ErrInvalidID.
func Range(ctx context.Context, rdb redis.UniversalClient, stream, start, end string, count int64) ([]Entry, error) {
	return rangeResult(stream, rdb.XRangeN(ctx, stream, start, end, count))
}

// RevRange is Range newest first (XREVRANGE end start).
func RevRange(ctx context.Context, rdb redis.UniversalClient, stream, end, start string, count int64) ([]Entry, error) {
	return rangeResult(stream, rdb.XRevRangeN(ctx, stream, end, start, count))
}

func rangeResult(stream string, cmd *redis.XMessageSliceCmd) ([]Entry, error) {
	if err := cmd.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", stream, invalidID(err))
	}
	return entries(cmd.Val()), nil
}

// Get reads the entry id of stream (XRANGE id id); false when there is none. A bad id is
// ErrInvalidID.
func Get(ctx context.Context, rdb redis.UniversalClient, stream, id string) (Entry, bool, error) {
	msgs, err := rdb.XRange(ctx, stream, id, id).Result()
	if err != nil {
		return Entry{}, false, fmt.Errorf("read %s of %s: %w", id, stream, invalidID(err))
	}
	if len(msgs) == 0 {
		return Entry{}, false, nil
	}
	return Entry{ID: msgs[0].ID, Values: msgs[0].Values}, true, nil
}

// Newest reads the n newest entries of each stream, newest first (XREVRANGE + - COUNT n), in
// one pipeline: out[i] holds those of streams[i].
func Newest(ctx context.Context, rdb redis.UniversalClient, streams []string, n int64) ([][]Entry, error) {
	cmds := make([]*redis.XMessageSliceCmd, len(streams))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = pipe.XRevRangeN(ctx, s, "+", "-", n)
		}
		return nil
	})
	out := make([][]Entry, len(streams))
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", streams[i], err)
		}
		out[i] = entries(c.Val())
	}
	return out, nil
}

// Lengths returns the length of each stream (XLEN; 0 for a stream never written), in one
// pipeline.
func Lengths(ctx context.Context, rdb redis.UniversalClient, streams []string) ([]int64, error) {
	cmds := make([]*redis.IntCmd, len(streams))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = p.XLen(ctx, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("length of %d streams: %w", len(streams), err)
	}
	out := make([]int64, len(streams))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// Delete deletes the entries ids of stream (XDEL) and returns how many existed. A bad id is
// ErrInvalidID.
func Delete(ctx context.Context, rdb redis.UniversalClient, stream string, ids ...string) (int64, error) {
	n, err := rdb.XDel(ctx, stream, ids...).Result()
	if err != nil {
		return 0, fmt.Errorf("delete from %s: %w", stream, invalidID(err))
	}
	return n, nil
}
