package streamq

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/server"
)

const defaultReplicaTimeout = time.Second

// ReplicationConfig makes Publish wait for replicas: every pipeline ends with one WAIT, and
// Publish returns nil once MinReplicas replicas confirmed its writes, else a
// *ReplicationError (ErrNotReplicated). Single-node or Sentinel clients only. See
// docs/publishing.md, Durable publish.
type ReplicationConfig struct {
	// MinReplicas is how many replicas must confirm each pipeline. Default 0: off, Publish
	// returns once the master applied the writes.
	MinReplicas int
	// Timeout bounds the wait (WAIT's timeout). It must be at least 1ms and at most half the
	// client's ReadTimeout. Default 1s when MinReplicas is set.
	Timeout time.Duration
}

func (r *ReplicationConfig) setDefaults() {
	if r.MinReplicas > 0 {
		setDefault(&r.Timeout, defaultReplicaTimeout)
	}
}

// validate checks MinReplicas and Timeout against each other and the client. WAIT counts the
// replicas of the node that served the connection it is sent on, after the writes sent
// before it there. A single-node pipeline is one connection; go-redis splits a Cluster (or
// Ring) pipeline by the keys' slots and sends a keyless WAIT to any node, so MinReplicas is
// refused there rather than answered by the wrong node.
func (r ReplicationConfig) validate(c redis.UniversalClient) error {
	switch {
	case r.MinReplicas < 0:
		return fmt.Errorf("Replication.MinReplicas must not be negative, got %d", r.MinReplicas)
	case r.Timeout < 0:
		return fmt.Errorf("Replication.Timeout must not be negative, got %s", r.Timeout)
	case r.MinReplicas == 0 && r.Timeout > 0:
		return fmt.Errorf("Replication.Timeout %s needs Replication.MinReplicas", r.Timeout)
	case r.MinReplicas == 0 || c == nil || server.IsNil(c):
		return nil
	case r.Timeout < time.Millisecond:
		return fmt.Errorf("Replication.Timeout must be at least 1ms (WAIT counts milliseconds; WAIT 0 blocks for ever), got %s", r.Timeout)
	}
	if server.Sharded(c) {
		return fmt.Errorf("Replication.MinReplicas needs a single-node or Sentinel (failover) client, not a %T: "+
			"go-redis sends a keyless WAIT in a cluster pipeline to any node, not to the masters that took the writes", c)
	}
	if rt, ok := server.ReadTimeout(c); ok && rt > 0 && r.Timeout > rt/2 {
		return fmt.Errorf("Replication.Timeout %s must be at most half the client's ReadTimeout %s: "+
			"go-redis reads a pipeline's replies, WAIT's included, within ReadTimeout and sends a timed-out pipeline again", r.Timeout, rt)
	}
	return nil
}
