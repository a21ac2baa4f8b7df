package admin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// parseID splits a stream id "ms-seq" (or "ms") into its parts; ok is false when it is not one.
func parseID(id string) (ms, seq uint64, ok bool) {
	msPart, seqPart, hasSeq := strings.Cut(id, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if hasSeq {
		if seq, err = strconv.ParseUint(seqPart, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return ms, seq, true
}

// idLess orders stream ids numerically (unparseable ids sort first).
func idLess(a, b string) bool {
	am, as, _ := parseID(a)
	bm, bs, _ := parseID(b)
	return am < bm || (am == bm && as < bs)
}

// idTime is the time encoded in a stream id's milliseconds part.
func idTime(id string) time.Time {
	ms, _, _ := parseID(id)
	return time.UnixMilli(int64(ms))
}

// noSuchKey reports the XINFO error of a stream that was never written.
func noSuchKey(err error) bool { return redis.HasErrorPrefix(err, "no such key") }

// invalidID reports Redis rejecting a stream id argument.
func invalidID(err error) bool { return redis.HasErrorPrefix(err, "Invalid stream ID") }

// serverTime is the Redis server's clock, the one stream ids and heartbeats are written with.
func (a *Admin) serverTime(ctx context.Context) (time.Time, error) {
	t, err := a.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read server time: %w", err)
	}
	return t, nil
}

// streams returns the stream keys of partitions [from, to) of topic, built by key.
func streams(key func(string, int) string, topic string, from, to int) []string {
	out := make([]string, 0, to-from)
	for p := from; p < to; p++ {
		out = append(out, key(topic, p))
	}
	return out
}

// checkGroup validates a consumer group name.
func checkGroup(group string) error {
	if err := keys.ValidateName("consumer group", group); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return nil
}
