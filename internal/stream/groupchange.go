package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/keys"
)

// DestroyGroup destroys group on stream (XGROUP DESTROY, its pending entries with it) and
// reports whether it existed; a stream never written has no group.
func DestroyGroup(ctx context.Context, rdb redis.UniversalClient, stream, group string) (bool, error) {
	n, err := rdb.XGroupDestroy(ctx, stream, group).Result()
	if err != nil && !IsNoSuchKey(err) {
		return false, fmt.Errorf("destroy group %q on %s: %w", group, stream, err)
	}
	return n > 0, nil
}

// SetGroupID moves group to last-delivered id on each stream of streams in one pipeline:
// XGROUP SETID where exists[i], else XGROUP CREATE ... MKSTREAM (a group created meanwhile,
// BUSYGROUP, is set instead). It returns how many it created. A bad id is ErrInvalidID.
func SetGroupID(ctx context.Context, rdb redis.UniversalClient, streams []string, exists []bool, group, id string) (int, error) {
	cmds := make([]*redis.StatusCmd, len(streams))
	created := 0
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, s := range streams {
			if exists[i] {
				cmds[i] = pipe.XGroupSetID(ctx, s, group, id)
			} else {
				cmds[i] = pipe.XGroupCreateMkStream(ctx, s, group, id)
				created++
			}
		}
		return nil
	})
	for i, c := range cmds {
		if err := setErr(ctx, rdb, streams[i], group, id, c.Err()); err != nil {
			return created, err
		}
	}
	return created, nil
}

// setErr handles a failed step of SetGroupID: a group created meanwhile is set instead.
func setErr(ctx context.Context, rdb redis.UniversalClient, stream, group, id string, err error) error {
	if err != nil && redis.HasErrorPrefix(err, "BUSYGROUP") {
		err = rdb.XGroupSetID(ctx, stream, group, id).Err()
	}
	if err != nil {
		return fmt.Errorf("set offset of group %q on %s: %w", group, stream, invalidID(err))
	}
	return nil
}

// Frontiers reads group's commit frontier (the highest id it acked) from each partition's
// commit hash of commitKeys in one pipeline; out[i] is that of commitKeys[i], absent where the
// group acked nothing yet.
func Frontiers(ctx context.Context, rdb redis.UniversalClient, commitKeys []string, group string) (map[int]string, error) {
	cmds := make([]*redis.StringCmd, len(commitKeys))
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, k := range commitKeys {
			cmds[i] = pipe.HGet(ctx, k, group)
		}
		return nil
	})
	out := make(map[int]string, len(commitKeys))
	for i, c := range cmds {
		switch err := c.Err(); {
		case err == nil:
			out[i] = c.Val()
		case !errors.Is(err, redis.Nil):
			return nil, fmt.Errorf("commit frontier of group %q in %s: %w", group, commitKeys[i], err)
		}
	}
	return out, nil
}

// GroupState is where a partition keeps per-group state beside its stream: the commit hash
// and the trim-loss hash.
type GroupState struct {
	Stream, Commit, TrimLoss string
}

// ForgetGroup removes group's state from each partition in one pipeline: its field of the
// commit hash, its lossFields of the trim-loss hash (retention.LossFields), its liveness
// record (keys.GroupSeen) and its registration beside the stream (keys.RegisteredGroups).
func ForgetGroup(ctx context.Context, rdb redis.UniversalClient, parts []GroupState, group string, lossFields []string) error {
	_, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, p := range parts {
			pipe.HDel(ctx, p.Commit, group)
			pipe.HDel(ctx, p.TrimLoss, lossFields...)
			pipe.HDel(ctx, keys.GroupSeen(p.Stream), keys.SeenField(group), keys.ExpiredField(group))
			pipe.SRem(ctx, keys.RegisteredGroups(p.Stream), group)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove commit frontier of group %q: %w", group, err)
	}
	return nil
}
