package dlq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/stream"
)

// Size is the number of dead letters in the DLQ streams dlqStreams, summed (XLEN of each, in
// one pipeline).
func Size(ctx context.Context, rdb redis.UniversalClient, dlqStreams []string) (int64, error) {
	lengths, err := stream.Lengths(ctx, rdb, dlqStreams)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, n := range lengths {
		total += n
	}
	return total, nil
}

// Read returns up to count dead letters of dlqStream from start on ("-" for the oldest, "(id"
// for those after id), oldest first.
func Read(ctx context.Context, rdb redis.UniversalClient, dlqStream, start string, count int64) ([]Entry, error) {
	es, err := stream.Range(ctx, rdb, dlqStream, start, "+", count)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = Entry{ID: e.ID, Partition: PartitionOf(e.Values), Values: e.Values}
	}
	return out, nil
}

// Get returns dead letter id of dlqStream: ErrNotFound when there is none, stream.ErrInvalidID
// when id is not a stream id.
func Get(ctx context.Context, rdb redis.UniversalClient, dlqStream, id string) (Entry, error) {
	e, ok, err := stream.Get(ctx, rdb, dlqStream, id)
	if err != nil {
		return Entry{}, err
	}
	if !ok {
		return Entry{}, fmt.Errorf("%w: %s of %s", ErrNotFound, id, dlqStream)
	}
	return Entry{ID: e.ID, Partition: PartitionOf(e.Values), Values: e.Values}, nil
}

// Delete removes dead letter id of dlqStream and reports whether it existed;
// stream.ErrInvalidID when id is not a stream id.
func Delete(ctx context.Context, rdb redis.UniversalClient, dlqStream, id string) (bool, error) {
	n, err := stream.Delete(ctx, rdb, dlqStream, id)
	return n > 0, err
}

// Mark is a dead letter's latest replay: when, and the stream id of the appended entry.
type Mark struct {
	At time.Time
	As string
}

// Marks reads the replay marks of ids in dlqStream (keys.ReplayMarks); ids without one are
// absent.
func Marks(ctx context.Context, rdb redis.UniversalClient, dlqStream string, ids []string) (map[string]Mark, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	vals, err := rdb.HMGet(ctx, keys.ReplayMarks(dlqStream), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("read replay marks of %s: %w", dlqStream, err)
	}
	out := map[string]Mark{}
	for i, id := range ids[:min(len(ids), len(vals))] {
		s, _ := vals[i].(string)
		if mk, ok := parseMark(s); ok {
			out[id] = mk
		}
	}
	return out, nil
}

// parseMark reads a replay mark, "ms|new stream id"; false when s is not one.
func parseMark(s string) (Mark, bool) {
	at, as, ok := strings.Cut(s, "|")
	if !ok {
		return Mark{}, false
	}
	ms, _ := strconv.ParseInt(at, 10, 64)
	return Mark{At: time.UnixMilli(ms), As: as}, true
}

// ForgetMarks removes the replay marks of ids (none: every mark) of dlqStream, for dead
// letters deleted from it.
func ForgetMarks(ctx context.Context, rdb redis.UniversalClient, dlqStream string, ids ...string) error {
	var err error
	if len(ids) == 0 {
		err = rdb.Del(ctx, keys.ReplayMarks(dlqStream)).Err()
	} else {
		err = rdb.HDel(ctx, keys.ReplayMarks(dlqStream), ids...).Err()
	}
	if err != nil {
		return fmt.Errorf("forget replay marks of %s: %w", dlqStream, err)
	}
	return nil
}
