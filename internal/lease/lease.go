// Package lease is how a member holds partitions: the partition leases (one owner per
// partition and group, renewed, released, reclaimed by a static member's next process), the
// deterministic assignment every member computes, and the membership engine that runs on
// them: the rebalancer (heartbeat, assignment, acquire and hand over, healing what
// disappeared in Redis), the renewer, a static member's presence and name, and the lease
// budget of a Subscriber. The group's members as stored are package member's.
package lease

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
)

var (
	//go:embed lua/acquire.lua
	acquireSrc string
	//go:embed lua/renew.lua
	renewSrc string
	//go:embed lua/release.lua
	releaseSrc string
	//go:embed lua/reclaim.lua
	reclaimSrc string

	acquireScript = script.New(acquireSrc)
	renewScript   = script.New(renewSrc)
	releaseScript = script.New(releaseSrc)
	reclaimScript = script.New(reclaimSrc)
)

// Leases takes, renews and releases lease keys for one member. Every acquisition gets its own
// owner token, "member#nonce.epoch": the epoch grows with each acquisition, so a worker that
// lost a partition can never pass a fence, even after its member took the partition back.
type Leases struct {
	rdb    redis.UniversalClient
	member string
	prefix string // member#nonce.
	ttl    time.Duration
	epoch  atomic.Uint64
}

// New returns Leases for member with the given TTL.
func New(rdb redis.UniversalClient, member, nonce string, ttl time.Duration) *Leases {
	return &Leases{rdb: rdb, member: member, prefix: member + "#" + nonce + ".", ttl: ttl}
}

// NextToken returns a fresh owner token for one acquisition.
func (l *Leases) NextToken() string {
	return l.prefix + strconv.FormatUint(l.epoch.Add(1), 10)
}

// Acquire takes the lease at key with token (or extends it when token already holds it)
// and reports whether token holds it.
func (l *Leases) Acquire(ctx context.Context, key, token string) (bool, error) {
	return l.run(ctx, acquireScript, key, token, l.ttl.Milliseconds())
}

// Reclaim is Acquire for a static member: it also takes the lease over from a token of an
// earlier process of the same member, which fences that process out (its renewals and
// fenced writes fail from then on). Only the process holding the member's name (Instance)
// may call it. took reports such a takeover.
func (l *Leases) Reclaim(ctx context.Context, key, token string) (held, took bool, err error) {
	n, err := reclaimScript.Run(ctx, l.rdb, []string{key}, token, l.ttl.Milliseconds(), l.member).Int()
	if err != nil {
		return false, false, fmt.Errorf("lease %s: %w", key, err)
	}
	return n > 0, n == 2, nil
}

// Renew extends the lease at key; false means token no longer owns it.
func (l *Leases) Renew(ctx context.Context, key, token string) (bool, error) {
	return l.run(ctx, renewScript, key, token, l.ttl.Milliseconds())
}

// Release deletes the lease at key if token owns it.
func (l *Leases) Release(ctx context.Context, key, token string) (bool, error) {
	return l.run(ctx, releaseScript, key, token)
}

func (l *Leases) run(ctx context.Context, s *redis.Script, key, token string, args ...any) (bool, error) {
	n, err := s.Run(ctx, l.rdb, []string{key}, append([]any{token}, args...)...).Int()
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", key, err)
	}
	return n == 1, nil
}

// Owner returns the token holding the lease at key, or "" when it is free.
func Owner(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	v, err := rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s: %w", key, err)
	}
	return v, nil
}

// Owners returns the token holding each lease of keys ("" when free), read in one pipeline.
// A lease whose read failed after the first free one reads as free: the pipeline's first
// error decides, and a free lease (redis.Nil) is not one.
func Owners(ctx context.Context, rdb redis.UniversalClient, keys []string) ([]string, error) {
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// Held is a lease this member holds: its key and the token it holds it with.
type Held struct{ Key, Token string }

// Renewal is the outcome of renewing one Held lease: Owned false with a nil Err means another
// owner has it.
type Renewal struct {
	Owned bool
	Err   error
}

// RenewAll renews every held lease in one pipeline (one round trip per node on a Cluster),
// so a member with many partitions renews in time even with a small connection pool.
func (l *Leases) RenewAll(ctx context.Context, held []Held) []Renewal {
	out := make([]Renewal, len(held))
	cmds := make([]*redis.Cmd, len(held))
	_, _ = l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, h := range held {
			cmds[i] = renewScript.EvalSha(ctx, p, []string{h.Key}, h.Token, l.ttl.Milliseconds())
		}
		return nil
	})
	for i, c := range cmds {
		n, err := c.Int()
		if script.IsNoScript(err) {
			out[i].Owned, out[i].Err = l.Renew(ctx, held[i].Key, held[i].Token) // EVAL loads it
			continue
		}
		if err != nil {
			out[i].Err = fmt.Errorf("lease %s: %w", held[i].Key, err)
			continue
		}
		out[i].Owned = n == 1
	}
	return out
}
