// Package lease implements partition leases (one owner per partition and group), group
// membership heartbeats and the deterministic partition assignment all members compute.
package lease

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/acquire.lua
	acquireSrc string
	//go:embed lua/renew.lua
	renewSrc string
	//go:embed lua/release.lua
	releaseSrc string

	acquireScript = redis.NewScript(acquireSrc)
	renewScript   = redis.NewScript(renewSrc)
	releaseScript = redis.NewScript(releaseSrc)
)

// Leases takes, renews and releases lease keys with one owner token.
type Leases struct {
	rdb   redis.UniversalClient
	token string
	ttl   time.Duration
}

// New returns Leases that act for token with the given TTL.
func New(rdb redis.UniversalClient, token string, ttl time.Duration) *Leases {
	return &Leases{rdb: rdb, token: token, ttl: ttl}
}

// Token is the owner token written into lease keys.
func (l *Leases) Token() string { return l.token }

// Acquire takes the lease at key (or extends it when already held) and reports whether the
// caller holds it.
func (l *Leases) Acquire(ctx context.Context, key string) (bool, error) {
	return l.run(ctx, acquireScript, key, l.ttl.Milliseconds())
}

// Renew extends the lease at key; false means the caller no longer owns it.
func (l *Leases) Renew(ctx context.Context, key string) (bool, error) {
	return l.run(ctx, renewScript, key, l.ttl.Milliseconds())
}

// Release deletes the lease at key if the caller owns it.
func (l *Leases) Release(ctx context.Context, key string) (bool, error) {
	return l.run(ctx, releaseScript, key)
}

func (l *Leases) run(ctx context.Context, s *redis.Script, key string, args ...any) (bool, error) {
	n, err := s.Run(ctx, l.rdb, []string{key}, append([]any{l.token}, args...)...).Int()
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", key, err)
	}
	return n == 1, nil
}

// Owner returns the token holding the lease at key, or "" when it is free.
func Owner(ctx context.Context, rdb redis.UniversalClient, key string) (string, error) {
	v, err := rdb.Get(ctx, key).Result()
	if err == redis.Nil {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s: %w", key, err)
	}
	return v, nil
}
