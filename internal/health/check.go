// Package health checks the Redis servers behind a client (version, maxmemory-policy,
// maxmemory: once per client) and watches their memory (the high-water mark, a full Redis):
// shared by the Publishers and Subscribers of a client.
package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

// serverRecheckInterval is the soonest a server that could not be reached is asked again:
// a Cluster master that is down must not cost every Publish a dial.
const serverRecheckInterval = 30 * time.Second

// ErrAuth wraps a server's refusal of the client's credentials: a configuration error.
var ErrAuth = errors.New("redis refused the client's credentials")

// evictionRisk is what a maxmemory-policy other than noeviction puts at risk.
const evictionRisk = "evicted partition leases let two members own a partition at once; evicted retry " +
	"and delay items lose those messages; evicted offloaded payloads leave entries without a payload " +
	"(dead-lettered); an evicted stream loses its messages and its consumer groups. The volatile-* " +
	"policies evict keys with a TTL, and leases, ack sets and payloads have one"

// Check checks the Redis servers behind one client, once for every Publisher and
// Subscriber of that client: a server older than MinRedisVersion is an ErrUnsupportedServer,
// a maxmemory-policy other than noeviction is logged once per server. A server that refuses
// INFO (an ACL user without it, a proxy, an emulation) is not checked, which is logged at
// debug level; one that cannot be reached is asked again at a later use, no sooner than
// serverRecheckInterval, and does not fail the call (the call's own commands report it).
type Check struct {
	done atomic.Bool // every server was checked: nothing more to do

	mu      sync.Mutex
	retryAt time.Time       // some server could not be reached: ask again after this
	seen    map[string]bool // servers whose findings were logged
}

// CheckOf returns the check shared by every user of rdb (one per Publisher or Subscriber for
// a client that is not one of go-redis's types). It also readies rdb for a server that cannot
// read the scripts' shebang lines (script.Compat).
func CheckOf(rdb redis.UniversalClient) *Check {
	script.Compat(rdb)
	return server.PerClient(rdb, "server-check", func() *Check { return &Check{} })
}

// Ensure checks the servers of rdb unless that was done. It returns an error wrapping
// server.ErrUnsupported, one wrapping ErrAuth, or the client's error when it is closed.
func (c *Check) Ensure(ctx context.Context, rdb redis.UniversalClient, logger watermill.LoggerAdapter) error {
	if c.done.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done.Load() || time.Now().Before(c.retryAt) {
		return nil
	}
	again, err := c.judge(server.Read(ctx, rdb), logger)
	switch {
	case err != nil:
		return err
	case again && ctx.Err() == nil:
		c.retryAt = time.Now().Add(serverRecheckInterval)
	case !again:
		c.done.Store(true)
	}
	return nil
}

// judge logs what each server told (once per server) and returns the servers that are too
// old, a closed client's error, and whether some server must be asked again.
func (c *Check) judge(nodes []server.Node, logger watermill.LoggerAdapter) (again bool, err error) {
	var old []error
	for _, n := range nodes {
		switch {
		case n.Err == nil:
			old = append(old, c.judgeFacts(n, logger))
		case server.IsClosed(n.Err):
			return false, n.Err // the caller closed its client: its own error
		case server.AuthProblem(n.Addr, n.Err) != nil:
			return false, fmt.Errorf("%w: %w", ErrAuth, server.AuthProblem(n.Addr, n.Err))
		case server.Refused(n.Err):
			c.logOnce(n.Addr, func() {
				logger.Debug("Redis server check skipped: the server refused INFO", watermill.LogFields{
					"server": n.Addr, "reply": n.Err.Error(),
				})
			})
		default:
			again = true
			logger.Debug("Redis server check postponed: the server could not be asked", watermill.LogFields{
				"server": n.Addr, "err": n.Err.Error(), "retry_after": serverRecheckInterval,
			})
		}
	}
	return again, errors.Join(old...)
}

// judgeFacts returns the server's ErrUnsupportedServer, or logs its findings once.
func (c *Check) judgeFacts(n server.Node, logger watermill.LoggerAdapter) error {
	f := server.Judge(n.Addr, n.Facts)
	if f.Unsupported != nil {
		return f.Unsupported
	}
	c.logOnce(n.Addr, func() {
		if f.Evicting {
			logger.Info("Redis maxmemory-policy is not noeviction: under memory pressure Redis evicts keys streamq needs", watermill.LogFields{
				"server": n.Addr, "maxmemory_policy": n.Facts.MaxmemoryPolicy, "risk": evictionRisk,
				"fix": "CONFIG SET maxmemory-policy noeviction (and in the server's config file): a full Redis then refuses writes, and Publish returns the OOM error, instead of dropping data",
			})
		}
		if f.NoMemoryLimit {
			logger.Info("Redis has no maxmemory: a backlog grows until the machine runs out of memory, and then the kernel, not Redis, ends the queue", watermill.LogFields{
				"server": n.Addr,
				"fix":    "CONFIG SET maxmemory <bytes> with maxmemory-policy noeviction (and in the server's config file): a full Redis then refuses publishes while consumers drain (docs/storage.md)",
			})
		}
		if len(f.Unknown) > 0 {
			logger.Debug("Redis server check skipped in part: INFO did not tell", watermill.LogFields{
				"server": n.Addr, "unchecked": strings.Join(f.Unknown, ", "),
			})
		}
	})
	return nil
}

// logOnce runs log the first time it is called for addr.
func (c *Check) logOnce(addr string, log func()) {
	if c.seen[addr] {
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[addr] = true
	log()
}
