// Package inspect holds the read-only views admin builds its reports from that read several
// kinds of keys in one pipeline: a topic's partitions (stream info, groups, DLQ length), one
// group over a topic's partitions (position, lease, commit frontier, trim losses, members),
// and a topic's counters against the server's clock. The reads of one kind of key live with
// that key's package (internal/stream, internal/lease, internal/retention); what this package
// returns is plain Go values, never go-redis replies.
package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Partition is what one pipeline read of a topic's partition: its stream's info and groups,
// its DLQ's length and whether a retry was ever appended to it.
type Partition struct {
	Info    *stream.Info // nil: the stream was never written
	Groups  []stream.GroupInfo
	DLQLen  int64
	Retried bool // keys.RetryCount exists: the stream may hold retry entries
}

// Partitions reads XINFO STREAM, XLEN of the DLQ, XINFO GROUPS and whether retries were ever
// counted (EXISTS keys.RetryCount) of every partition, in one pipeline: streams[p] and
// dlqs[p] are partition p's stream and DLQ keys.
func Partitions(ctx context.Context, rdb redis.UniversalClient, streams, dlqs []string) ([]Partition, error) {
	type read struct {
		info   func() (*stream.Info, error)
		dlq    *redis.IntCmd
		groups func() ([]stream.GroupInfo, error)
		count  *redis.IntCmd
	}
	reads := make([]read, len(streams))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for p, s := range streams {
			reads[p] = read{
				info: stream.QueueInfo(ctx, pipe, s), dlq: pipe.XLen(ctx, dlqs[p]),
				groups: stream.QueueGroups(ctx, pipe, s), count: pipe.Exists(ctx, keys.RetryCount(s)),
			}
		}
		return nil
	})
	out := make([]Partition, len(streams))
	for p, r := range reads {
		info, err := r.info()
		groups, gerr := r.groups()
		if err = firstErr(err, gerr); err != nil {
			return nil, fmt.Errorf("info of %s: %w", streams[p], err)
		}
		if err := r.dlq.Err(); err != nil {
			return nil, fmt.Errorf("length of %s: %w", dlqs[p], err)
		}
		if err := r.count.Err(); err != nil {
			return nil, fmt.Errorf("retry counts of %s: %w", streams[p], err)
		}
		out[p] = Partition{Info: info, Groups: groups, DLQLen: r.dlq.Val(), Retried: r.count.Val() > 0}
	}
	return out, nil
}

// firstErr returns the first error of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Counters reads the server's clock (TIME) and XINFO STREAM of every stream of keys in one
// pipeline; a stream never written has a nil Info.
func Counters(ctx context.Context, rdb redis.UniversalClient, keys []string) (time.Time, []*stream.Info, error) {
	var now *redis.TimeCmd
	reads := make([]func() (*stream.Info, error), len(keys))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		now = pipe.Time(ctx)
		for i, k := range keys {
			reads[i] = stream.QueueInfo(ctx, pipe, k)
		}
		return nil
	})
	if err := now.Err(); err != nil {
		return time.Time{}, nil, fmt.Errorf("read server time: %w", err)
	}
	infos := make([]*stream.Info, len(keys))
	for i, read := range reads {
		info, err := read()
		if err != nil {
			return time.Time{}, nil, fmt.Errorf("info of %s: %w", keys[i], err)
		}
		infos[i] = info
	}
	return now.Val(), infos, nil
}
