package retention

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
	"github.com/streamq-dev/streamq/internal/script"
)

//go:embed lua/seen.lua
var seenSrc string

var seenScript = script.New(seenSrc)

// MarkSeen records that group is live on the partition stream at now (keys.GroupSeen): the
// group's lease holder calls it every trim interval, so no trim takes the group for expired.
// It returns since when retention had left the group out for its expiry (the zero time when
// it had not): the group is back, and holds retention back again from now on. Nothing is
// recorded on a stream that is gone (deleted under its lease holder).
func MarkSeen(ctx context.Context, rdb redis.Scripter, stream, group string, now time.Time) (time.Time, error) {
	was, err := seenScript.Run(ctx, rdb, []string{keys.GroupSeen(stream), stream}, group, now.UnixMilli()).Text()
	if err != nil {
		return time.Time{}, fmt.Errorf("mark group %q live on %s: %w", group, stream, err)
	}
	return msTime(was), nil
}

// Seen is what a partition records of one group's liveness (keys.GroupSeen).
type Seen struct {
	// LastSeen is when a lease holder of the group last recorded it live there (or when a trim
	// first found it registered); zero when never.
	LastSeen time.Time
	// ExpiredSince is when retention first left the group out for its group expiry; zero when
	// it does not (the group is live, or has not been absent for an expiry).
	ExpiredSince time.Time
}

// ReadSeen reads, in one pipeline, the group-seen records of every stream: per stream, group
// -> Seen (an empty map when none).
func ReadSeen(ctx context.Context, rdb redis.UniversalClient, streams []string) ([]map[string]Seen, error) {
	cmds := make([]*redis.MapStringStringCmd, len(streams))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range streams {
			cmds[i] = p.HGetAll(ctx, keys.GroupSeen(s))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read group liveness: %w", err)
	}
	out := make([]map[string]Seen, len(streams))
	for i, c := range cmds {
		out[i] = parseSeen(c.Val())
	}
	return out, nil
}

func parseSeen(fields map[string]string) map[string]Seen {
	out := map[string]Seen{}
	for f, v := range fields {
		if g, ok := strings.CutPrefix(f, keys.SeenField("")); ok {
			s := out[g]
			s.LastSeen = msTime(v)
			out[g] = s
		} else if g, ok := strings.CutPrefix(f, keys.ExpiredField("")); ok {
			s := out[g]
			s.ExpiredSince = msTime(v)
			out[g] = s
		}
	}
	return out
}

// msTime is the time of a Unix ms string; zero for "" or garbage.
func msTime(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
