package server

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
)

// Clustered reports whether rdb is a Cluster client: a multi-key command sent through it
// must keep its keys in one hash slot.
func Clustered(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}

// ReloadOnConnError asks a Cluster client to refresh its slot map after a connection error.
// go-redis reloads it on MOVED or every ClusterStateReloadInterval (60 s by default), not
// when a master stops answering; after a failover this finds the promoted replica at once.
// ReloadState is lazy and rate-limited, so calling it on every such error is cheap.
func ReloadOnConnError(ctx context.Context, rdb redis.UniversalClient, err error) {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok || err == nil {
		return
	}
	var op *net.OpError
	if errors.As(err, &op) || redis.HasErrorPrefix(err, "CLUSTERDOWN") {
		c.ReloadState(ctx)
	}
}
