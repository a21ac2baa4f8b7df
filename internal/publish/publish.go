// Package publish sends a Publisher's writes: each flush is one pipeline (one round trip)
// of appends, offloaded appends and delay-set parkings, ending with one WAIT when replicas
// must confirm them.
package publish

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/deferred"
	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/server"
)

var (
	//go:embed lua/append.lua
	appendSrc    string
	appendScript = redis.NewScript(appendSrc)
)

// Write is one message's write: exactly one of XAdd, Park and Offload is set. With Once, an
// XAdd or Offload goes through the idempotent append script instead.
type Write struct {
	Partition int   // the message's partition, for the caller: not sent
	XAdd      []any // the whole XADD command, its name included
	Park      *Park
	Offload   *payload.Offload
	Once      *Once
}

// Once makes an append idempotent: the message UUID is remembered in the partition's Key
// (stream ids) and Times (append ms) for Window, and an append of a remembered UUID appends
// nothing and answers the first append's id.
type Once struct {
	Key, Times, UUID string
	Window           time.Duration
}

// LoadScripts caches the append script on the server: writes with Once send it by SHA.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	return appendScript.Load(ctx, rdb).Err()
}

// Park parks a delayed message's Item in the delay set ZSet (items in Items) until Due.
type Park struct {
	ZSet, Items, ID string
	Due             time.Time
	Item            deferred.Item
}

// Call is one caller's writes in a flush and, once Flush returned, one Result per write.
type Call struct {
	Writes  []Write
	Results []Result
}

// Result is what Redis answered to one write.
type Result struct {
	cmd    redis.Cmder
	append bool // the write appends to the partition stream (XAdd or Offload), not Park
}

// Err is the write's error, nil when Redis took it.
func (r Result) Err() error { return r.cmd.Err() }

// Duplicate reports an idempotent append that appended nothing: the message was appended
// within the window already (StreamID is that append's id).
func (r Result) Duplicate() bool {
	c, ok := r.cmd.(*redis.Cmd)
	if !ok || c.Err() != nil {
		return false
	}
	reply, _ := c.Val().([]any)
	return len(reply) == 2 && reply[1] == int64(1)
}

// StreamID is the id of the entry the write appended, from the XADD's reply (or the offload
// script's, which returns the XADD's); "" when the write failed, parked a delayed message
// (it has no entry yet) or its reply names no entry (an offload that a retry of the same
// call had run already).
func (r Result) StreamID() string {
	if !r.append || r.cmd.Err() != nil {
		return ""
	}
	switch c := r.cmd.(type) {
	case *redis.StringCmd:
		return c.Val()
	case *redis.Cmd:
		switch v := c.Val().(type) {
		case string: // the offload script
			return v
		case []any: // the idempotent append: {id, duplicate}
			if len(v) == 2 {
				id, _ := v[0].(string)
				return id
			}
		}
	}
	return ""
}

// Replicas is the WAIT that ends each pipeline: none when N is 0.
type Replicas struct {
	N       int
	Timeout time.Duration
}

// Flush sends the writes of every call in one pipeline, in order, and sets each call's
// Results. Under wait it ends the pipeline with WAIT (server.QueueWait says why there) and
// returns the replicas it counted and its error; 0 and nil without one.
func Flush(ctx context.Context, rdb redis.UniversalClient, calls []*Call, wait Replicas) (acked int, err error) {
	var waitCmd *redis.IntCmd
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, c := range calls {
			c.Results = make([]Result, len(c.Writes))
			for i, w := range c.Writes {
				c.Results[i] = Result{cmd: w.queue(ctx, pipe), append: w.Park == nil}
			}
		}
		if wait.N > 0 {
			waitCmd = server.QueueWait(ctx, pipe, wait.N, wait.Timeout)
		}
		return nil
	})
	if waitCmd == nil {
		return 0, nil
	}
	n, err := waitCmd.Result()
	return int(n), err
}

// queue adds the write's command to pipe.
func (w Write) queue(ctx context.Context, pipe redis.Pipeliner) redis.Cmder {
	switch {
	case w.Once != nil && w.Park == nil:
		return w.queueOnce(ctx, pipe)
	case w.Park != nil:
		cmd, _ := deferred.ParkCmd(ctx, pipe, w.Park.ZSet, w.Park.Items, w.Park.ID, w.Park.Due, w.Park.Item)
		return cmd
	case w.Offload != nil:
		return payload.Cmd(ctx, pipe, *w.Offload)
	default:
		cmd := redis.NewStringCmd(ctx, w.XAdd...)
		_ = pipe.Process(ctx, cmd)
		return cmd
	}
}

// queueOnce adds the idempotent append of an XAdd or Offload write to pipe, by SHA (see
// internal/script: every append of a pipeline then goes by the same SHA, so a NOSCRIPT refuses
// them all, and they are sent again in their order).
func (w Write) queueOnce(ctx context.Context, pipe redis.Pipeliner) redis.Cmder {
	o := w.Once
	var stream, pkey, index, ref string
	var body []byte
	var ttl int64
	var fields []any
	if off := w.Offload; off != nil {
		stream, pkey, index, ref, body, ttl = off.Stream, off.Key, off.Index, off.Ref, off.Payload, off.TTL.Milliseconds()
		fields = off.Fields
	} else {
		stream, _ = w.XAdd[1].(string)
		pkey, index, fields = stream, stream, w.XAdd[3:]
	}
	args := make([]any, 0, 5+len(fields))
	args = append(args, o.UUID, o.Window.Milliseconds(), ref, body, ttl)
	args = append(args, fields...)
	return appendScript.EvalSha(ctx, pipe, []string{stream, o.Key, o.Times, pkey, index}, args...)
}
