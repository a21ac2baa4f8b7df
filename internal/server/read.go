package server

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Node is what Read learned of one server.
type Node struct {
	Addr  string // "" when the client does not tell
	Facts Facts
	// Err is why INFO told nothing: Refused(Err) tells a refusal (an ACL without INFO, a proxy
	// or emulation without the section) from a server that could not be asked.
	Err error
}

// Read sends INFO server and INFO memory, in one pipeline, to every master of a Cluster
// client (each holds partitions, and each has its own configuration), to every shard of a
// Ring, or to the server of any other client. A Cluster whose masters cannot be listed gives
// one Node with that error.
func Read(ctx context.Context, rdb redis.UniversalClient) []Node {
	return readEachOf(ctx, rdb, readOne)
}

// readEachOf asks each master, shard or the one server of rdb with ask.
func readEachOf(ctx context.Context, rdb redis.UniversalClient, ask func(ctx context.Context, c redis.Cmdable, addr string) Node) []Node {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return readEach(ctx, c.ForEachMaster, ask)
	case *redis.Ring:
		return readEach(ctx, c.ForEachShard, ask)
	case *redis.Client:
		return []Node{ask(ctx, c, c.Options().Addr)}
	}
	return []Node{ask(ctx, rdb, "")}
}

type forEach func(ctx context.Context, fn func(ctx context.Context, c *redis.Client) error) error

func readEach(ctx context.Context, each forEach, ask func(ctx context.Context, c redis.Cmdable, addr string) Node) []Node {
	var mu sync.Mutex
	var nodes []Node
	err := each(ctx, func(ctx context.Context, c *redis.Client) error {
		n := ask(ctx, c, c.Options().Addr)
		mu.Lock()
		defer mu.Unlock()
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		nodes = append(nodes, Node{Err: err})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Addr < nodes[j].Addr })
	return nodes
}

// readOne asks one server. A refused INFO memory alone leaves the policy unknown.
func readOne(ctx context.Context, rdb redis.Cmdable, addr string) Node {
	var srv, mem *redis.StringCmd
	_, pipeErr := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		srv = p.Info(ctx, "server")
		mem = p.Info(ctx, "memory")
		return nil
	})
	if err := srv.Err(); err != nil {
		return Node{Addr: addr, Err: err}
	}
	if pipeErr != nil && srv.Val() == "" { // the connection failed before any reply (AUTH refused)
		return Node{Addr: addr, Err: pipeErr}
	}
	return Node{Addr: addr, Facts: ParseInfo(srv.Val(), mem.Val())}
}

// Refused reports whether err is the server refusing the question for good (NOPERM, an
// unknown command or section: an error reply) rather than a server that could not answer now
// (a connection error, LOADING, CLUSTERDOWN, TRYAGAIN, MASTERDOWN, max clients, failed auth).
func Refused(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	return !redis.IsLoadingError(err) && !redis.IsClusterDownError(err) && !redis.IsTryAgainError(err) &&
		!redis.IsMasterDownError(err) && !redis.IsMaxClientsError(err) && !redis.IsAuthError(err)
}
