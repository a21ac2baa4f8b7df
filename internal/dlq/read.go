package dlq

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

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
	es, err := stream.Range(ctx, rdb, dlqStream, start, "+", count, false)
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
