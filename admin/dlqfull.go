package admin

import (
	"context"
	"fmt"

	"github.com/streamq-dev/streamq"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

// RedisFullError is the error of a replay that Redis refused at maxmemory: nothing was
// replayed, the dead letter is where it was. errors.Is(err, streamq.ErrRedisFull) holds, as
// for a Publish refused at maxmemory. A replay adds an entry to the partition, so it waits
// until memory is freed: consumers that drain their backlog free it (their acks let the
// trims remove what every group acked), as do deleting dead letters no longer needed, a
// group no longer used (its position holds back the trims), or a larger maxmemory.
type RedisFullError struct {
	Topic     string
	Partition int
	ID        string // the dead letter's id
	// Server is the memory of the master that refused the replay, read when it refused (its
	// Err set when that read failed).
	Server ServerMemory
	// Err is the server's reply.
	Err error
}

func (e *RedisFullError) Error() string {
	where := "Redis"
	if e.Server.Addr != "" {
		where += " " + e.Server.Addr
	}
	mem := ""
	if e.Server.Err == nil && e.Server.Max > 0 {
		mem = ", using " + e.Server.String()
	}
	return fmt.Sprintf("%v: %s refused to replay dead letter %s to partition %d of %q at maxmemory%s; nothing was "+
		"replayed. Memory frees as consumers catch up (their acks let the trims remove what every group handled); "+
		"to free it sooner delete dead letters no longer needed (streamq dlq delete, dlq clear) or a group no longer "+
		"used (streamq stats shows what it HOLDS BACK), or raise maxmemory; then replay it again",
		streamq.ErrRedisFull, where, e.ID, e.Partition, e.Topic, mem)
}

// Is reports streamq.ErrRedisFull.
func (e *RedisFullError) Is(target error) bool { return target == streamq.ErrRedisFull }

// Unwrap returns the server's reply.
func (e *RedisFullError) Unwrap() error { return e.Err }

// fullReplay returns err as a *RedisFullError when it is Redis's refusal at maxmemory of the
// replay of dead letter id to topic's partition p, else err unchanged.
func (a *Admin) fullReplay(ctx context.Context, topic string, p int, id string, err error) error {
	if !script.IsOOM(err) {
		return err
	}
	m := server.MemoryOfKey(ctx, a.rdb, a.space.PartitionStream(topic, p))
	return &RedisFullError{Topic: topic, Partition: p, ID: id, Server: a.serverMemory(m), Err: err}
}
