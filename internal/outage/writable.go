package outage

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrRefused reports that Redis refuses the writes of the drain steps, the outage record's
// among them: a partition without a record may still be waiting out an outage.
var ErrRefused = errors.New("writes refused by Redis")

// QueueWritable queues in pipe a script that writes nothing and that Redis runs only when it
// takes the outage record's write at key now (lua/writable.lua); Writable reads its answer.
// It is sent as EVAL with its text, so it needs no Load.
func QueueWritable(ctx context.Context, pipe redis.Pipeliner, key string) *redis.Cmd {
	return writableScript.Eval(ctx, pipe, []string{key})
}

// Writable reads the answer QueueWritable queued: nil when Redis takes the write, an error
// wrapping ErrRefused and Redis's reply (OOM, MISCONF, NOREPLICAS, READONLY) when it refuses
// writes. Any other error (a user not allowed EVAL, a lost connection) tells nothing: nil.
func Writable(probe *redis.Cmd) error {
	if err := probe.Err(); RefusesWrites(err) {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return nil
}

// RefusesWrites reports whether err is Redis's refusal of a write for the server's state
// (OOM, MISCONF, NOREPLICAS, READONLY), not for the command.
func RefusesWrites(err error) bool {
	for _, prefix := range []string{"OOM", "MISCONF", "NOREPLICAS", "READONLY"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
