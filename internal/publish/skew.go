package publish

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/server"
)

// The idempotent append by UUID keeps its UUIDs in buckets of the server's clock, which
// append.lua reads itself: the caller's clock only names the buckets a call may touch, and a
// call whose buckets are not the server's is refused ("SKEW <server ms>") and sent again with
// the buckets of the clock its refusal carried. The offset learned is kept per go-redis
// client, so a host whose clock is off pays one more round trip once, not on every append.
// A call sent again goes after the rest of its pipeline: when a partition has several calls
// in one pipeline (over maxOnce appends) and the server's clock reaches the estimate's
// bucket between them, a later call may be appended before an earlier refused one. That
// needs an estimate ahead of the server (a host ahead, before its first refusal) and a
// bucket boundary within one pipeline.

// skewLag is how far the server's clock may have moved on past this process's estimate of it
// by the time an append.lua call runs (the pipeline's trip, a busy server) before the call is
// refused: the buckets named reach that far past the estimate, one bucket at least.
const skewLag = 20 * time.Millisecond

// maxSkewResends is how many times Flush sends the calls refused for the clock again; a call
// still refused then fails with the SKEW error.
const maxSkewResends = 2

// serverClock is the server's clock minus this process's, in ms, for the client rdb: what
// the last SKEW refusal showed, 0 before any.
func serverClock(rdb redis.UniversalClient) *atomic.Int64 {
	return server.PerClient(rdb, "append-clock", func() *atomic.Int64 { return new(atomic.Int64) })
}

// serverNow is the server's clock as this process estimates it from offset (serverClock), in
// Unix ms. The offset is learned from a refusal's clock as it arrives: the estimate lags the
// server by that reply's trip, the side the buckets named absorb (skewLag).
func serverNow(offset *atomic.Int64) int64 { return time.Now().UnixMilli() + offset.Load() }

// skewOf reads the server's clock (Unix ms) from append.lua's refusal of buckets that are
// not the server's; false for any other error, and for none.
func skewOf(err error) (int64, bool) {
	if !redis.HasErrorPrefix(err, "SKEW ") {
		return 0, false
	}
	_, rest, _ := strings.Cut(err.Error(), "SKEW ")
	word, _, _ := strings.Cut(rest, " ")
	ms, perr := strconv.ParseInt(word, 10, 64)
	return ms, perr == nil
}

// skewed returns the batches of b the server refused for the clock, and stores in offset the
// server's clock their refusals carried.
func (b *onceBatches) skewed(offset *atomic.Int64) onceBatches {
	var again onceBatches
	for _, batch := range b.all {
		if ms, ok := skewOf(batch.cmd.Err()); ok {
			offset.Store(ms - time.Now().UnixMilli())
			again.all = append(again.all, batch)
		}
	}
	return again
}

// resendSkewed sends the batches of b the server refused for the clock again, each time in
// a pipeline of their own ended by the WAIT of wait, up to maxSkewResends times. It returns
// the last WAIT it queued: nil when it sent nothing, or without one.
func (b *onceBatches) resendSkewed(ctx context.Context, rdb redis.UniversalClient, wait Replicas) *redis.IntCmd {
	if len(b.all) == 0 {
		return nil
	}
	offset := serverClock(rdb)
	var waitCmd *redis.IntCmd
	for range maxSkewResends {
		again := b.skewed(offset)
		if len(again.all) == 0 {
			break
		}
		waitCmd = pipeline(ctx, rdb, wait, func(pipe redis.Pipeliner) { again.queue(ctx, pipe, serverNow(offset)) })
		b = &again
	}
	return waitCmd
}
