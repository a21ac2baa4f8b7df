// Package fence is the lease check every fenced step shares. A fenced script takes the
// partition's lease key as KEYS[1] and the caller's owner token as ARGV[1], and returns
// Lost (-1) without touching anything when the token no longer holds the lease: another
// member owns the partition now, and whatever the caller meant to write would race it.
package fence

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrLeaseLost is returned by every fenced step whose token no longer holds the lease.
var ErrLeaseLost = errors.New("partition lease lost")

// Lost is the reply of a fenced script whose token no longer holds the lease.
const Lost = -1

// Fence is the lease a fenced step checks: the partition's lease key and the caller's token.
type Fence struct{ Key, Token string }

// Entry is the entry a fenced settle step acks: ID of Stream, pending for Group, under the
// lease Fence.
type Entry struct {
	Fence             Fence
	Stream, Group, ID string
}

// Check turns a fenced script's reply into the caller's result: the reply, or err wrapped
// with op, or ErrLeaseLost wrapped with op when the script answered Lost.
func Check(op string, res any, err error) (any, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if n, ok := res.(int64); ok && n == Lost {
		return nil, fmt.Errorf("%s: %w", op, ErrLeaseLost)
	}
	return res, nil
}

// Run runs a fenced script (EVALSHA, EVAL when the server does not have it cached) and
// checks its reply; keys[0] must be the lease key and args[0] the token.
func Run(ctx context.Context, rdb redis.Scripter, s *redis.Script, op string, keys []string, args ...any) (any, error) {
	res, err := s.Run(ctx, rdb, keys, args...).Result()
	return Check(op, res, err)
}

// Settled reads the reply of a fenced step that settles an entry: {id, 1 when the group held
// the entry (its XACK acked it), else 0}. A reply of another shape reads as ("", false).
func Settled(res any) (id string, held bool) {
	r, ok := res.([]any)
	if !ok || len(r) != 2 {
		return "", false
	}
	id, _ = r[0].(string)
	n, _ := r[1].(int64)
	return id, n == 1
}
