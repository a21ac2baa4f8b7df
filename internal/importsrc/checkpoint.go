package importsrc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrLockLost reports an import whose lock expired or was taken over: it stalled longer than
// the lock's TTL, so another import of the topic may be running.
var ErrLockLost = errors.New("import lock lost")

// Keys are the control keys of the imports into one topic. Both share the topic's hash tag,
// so a checkpoint and the lock it is fenced by are in one Redis Cluster slot.
type Keys struct {
	// Lock holds the token of the import running into the topic, with a TTL.
	Lock string
	// Checkpoints is a hash of how far imports got, by source and group (see Field).
	Checkpoints string
}

// KeysFor returns the import keys of topic under the control prefix.
func KeysFor(control, topic string) Keys {
	base := control + ":import:{" + topic + "}"
	return Keys{Lock: base + ":lock", Checkpoints: base + ":checkpoints"}
}

// Checkpoint kinds: what a field of the checkpoint hash records.
const (
	// Copied: every entry of the group not acked at or before this id was imported by a run
	// that left the source as it was.
	Copied = "copied"
	// Moved: the highest id of the entries a run took as the import's consumer of the group
	// (and acked once imported).
	Moved = "moved"
)

// Field is the checkpoint hash field of kind for group on stream src: `copied "orders"
// "payments"`, quoted so that any names read back unambiguously.
func Field(kind, src, group string) string {
	return kind + " " + strconv.Quote(src) + " " + strconv.Quote(group)
}

// Read returns the checkpoint fields (ids, "" when unset), in their order.
func Read(ctx context.Context, rdb redis.UniversalClient, k Keys, fields ...string) ([]string, error) {
	vals, err := rdb.HMGet(ctx, k.Checkpoints, fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("read import checkpoint %s: %w", k.Checkpoints, err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return out, nil
}

// Lock takes the import lock for token for ttl (SET NX PX); false when another import holds
// it.
func Lock(ctx context.Context, rdb redis.UniversalClient, k Keys, token string, ttl time.Duration) (bool, error) {
	ok, err := rdb.SetNX(ctx, k.Lock, token, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("take import lock %s: %w", k.Lock, err)
	}
	return ok, nil
}

// Record sets the checkpoint fields (field, id pairs) and extends the lock to ttl, if token
// still holds it: ErrLockLost when it does not. The check and the writes are one transaction
// (WATCH the lock, then MULTI/EXEC), so an import that lost its lock records nothing.
func Record(ctx context.Context, rdb redis.UniversalClient, k Keys, token string, ttl time.Duration, pairs ...string) error {
	err := holding(ctx, rdb, k, token, func(pipe redis.Pipeliner) {
		pipe.PExpire(ctx, k.Lock, ttl)
		if len(pairs) > 0 {
			pipe.HSet(ctx, k.Checkpoints, toAny(pairs)...)
		}
	})
	if err != nil {
		return fmt.Errorf("record import checkpoint %s: %w", k.Checkpoints, err)
	}
	return nil
}

// Unlock releases the lock if token holds it.
func Unlock(ctx context.Context, rdb redis.UniversalClient, k Keys, token string) error {
	err := holding(ctx, rdb, k, token, func(pipe redis.Pipeliner) { pipe.Del(ctx, k.Lock) })
	if err != nil && !errors.Is(err, ErrLockLost) {
		return fmt.Errorf("release import lock %s: %w", k.Lock, err)
	}
	return nil
}

// holding runs writes in a transaction that commits only while token holds the lock:
// ErrLockLost when it does not, or when the lock changed between the check and the commit.
func holding(ctx context.Context, rdb redis.UniversalClient, k Keys, token string, writes func(redis.Pipeliner)) error {
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		held, err := tx.Get(ctx, k.Lock).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if held != token {
			return fmt.Errorf("%w: %s", ErrLockLost, k.Lock)
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			writes(pipe)
			return nil
		})
		return err
	}, k.Lock)
	if errors.Is(err, redis.TxFailedErr) {
		return fmt.Errorf("%w: %s changed", ErrLockLost, k.Lock)
	}
	return err
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
