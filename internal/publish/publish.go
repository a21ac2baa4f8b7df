// Package publish is the publish engine of a Publisher (Engine): it routes each message and
// builds its write (an append, an offloaded append, or a parking in the delay set), coalesces
// concurrent Publish calls into pipelines (batcher.go), makes the appends idempotent by
// producer and sequence number or by UUID and remembers the numbers of the messages it did
// not see appended (resends.go), sends again what a NOSCRIPT refused (noscript.go), turns a
// refusal at maxmemory into the API's error (full.go) and trims the partitions it appends to
// in the background (trimmer.go). Each flush is one pipeline (one round trip), ending with
// one WAIT when replicas must confirm it (Flush, this file).
package publish

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/script"
	"github.com/streamq-dev/streamq/internal/server"
)

var (
	//go:embed lua/append.lua
	appendSrc    string
	appendScript = script.New(appendSrc)
)

// Write is one message's write: exactly one of XAdd, Park and Offload is set. With Seq or
// Once (not both), an XAdd or Offload goes through an idempotent append script instead.
type Write struct {
	Partition int   // the message's partition, for the caller: not sent
	XAdd      []any // the whole XADD command, its name included
	Park      *retry.Park
	Offload   *payload.Offload
	Seq       *Sequenced
	Once      *Once
}

// Once makes an append idempotent: the message UUID is remembered in the partition's buckets
// under Prefix (keys.Space.Idempotency) for at least Window, and an append of a remembered
// UUID appends nothing and answers the first append's id.
type Once struct {
	Prefix, Index, UUID string // Index: the partition's payload index
	Window              time.Duration
}

// LoadScripts caches the idempotent append scripts on the server: writes with Seq or Once
// send them by SHA.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	if err := appendSeqScript.Load(ctx, rdb).Err(); err != nil {
		return err
	}
	return appendScript.Load(ctx, rdb).Err()
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
	at     int  // the write's place in its idempotent append's reply; -1: a command of its own
	flat   bool // the reply holds one id per write, "" for a duplicate (Seq); else {id, duplicate} pairs (Once)
}

// Err is the write's error, nil when Redis took it.
func (r Result) Err() error { return r.cmd.Err() }

// Duplicate reports an idempotent append that appended nothing: the message was appended
// within the window already (StreamID is that append's id under Once, "" under Seq).
func (r Result) Duplicate() bool {
	_, dup := r.onceReply()
	return dup
}

// onceReply reads the write's part of an idempotent append's reply: its id, and whether it was a duplicate.
func (r Result) onceReply() (string, bool) {
	if r.at < 0 || r.cmd.Err() != nil {
		return "", false
	}
	if c, ok := r.cmd.(*redis.StringSliceCmd); ok && r.flat {
		reply := c.Val()
		if r.at >= len(reply) {
			return "", false
		}
		return reply[r.at], reply[r.at] == ""
	}
	c, ok := r.cmd.(*redis.Cmd)
	if !ok {
		return "", false
	}
	reply, _ := c.Val().([]any)
	if 2*r.at+1 >= len(reply) {
		return "", false
	}
	id, _ := reply[2*r.at].(string)
	return id, reply[2*r.at+1] == int64(1)
}

// StreamID is the id of the entry the write appended, from the XADD's reply (or the offload
// script's, which returns the XADD's); "" when the write failed, parked a delayed message
// (it has no entry yet) or its reply names no entry (an offload that a retry of the same
// call had run already).
func (r Result) StreamID() string {
	if !r.append || r.cmd.Err() != nil {
		return ""
	}
	if r.at >= 0 {
		id, _ := r.onceReply()
		return id
	}
	switch c := r.cmd.(type) {
	case *redis.StringCmd:
		return c.Val()
	case *redis.Cmd:
		id, _ := c.Val().(string) // the offload script
		return id
	}
	return ""
}

// Replicas is the WAIT that ends each pipeline: none when N is 0.
type Replicas struct {
	N       int
	Timeout time.Duration
}

// Flush sends the writes of every call in one pipeline, in order, and sets each call's
// Results; q (nil: none) is the producer that sends the sequenced appends, which learns what
// its records hold. The idempotent appends (Seq, Once) of one partition go as one script call per up
// to maxOnce of them, in their order; those by UUID that the server refused because this
// process's estimate of its clock was off are sent again (see skew.go). Under wait it ends
// each pipeline with WAIT (server.QueueWait says why there) and returns the replicas the
// last one counted and its error; 0 and nil without one.
func Flush(ctx context.Context, rdb redis.UniversalClient, calls []*Call, wait Replicas, q *Sequencer) (acked int, err error) {
	var batches onceBatches
	var seqs seqBatches
	waitCmd := pipeline(ctx, rdb, wait, func(pipe redis.Pipeliner) {
		for _, c := range calls {
			c.Results = make([]Result, len(c.Writes))
			for i, w := range c.Writes {
				switch {
				case w.Park != nil:
				case w.Seq != nil:
					seqs.add(w, &c.Results[i])
					continue
				case w.Once != nil:
					batches.add(w, &c.Results[i])
					continue
				}
				c.Results[i] = Result{cmd: w.queue(ctx, pipe), append: w.Park == nil, at: -1}
			}
		}
		seqs.queue(ctx, pipe, server.Clustered(rdb), q)
		if len(batches.all) > 0 {
			batches.queue(ctx, pipe, serverNow(serverClock(rdb)))
		}
	})
	seqs.learn(q)
	if again := batches.resendSkewed(ctx, rdb, wait); again != nil {
		waitCmd = again
	}
	if waitCmd == nil {
		return 0, nil
	}
	n, err := waitCmd.Result()
	return int(n), err
}

// pipeline sends what fill queues as one pipeline, ended by a WAIT under wait: that WAIT, nil
// without one.
func pipeline(ctx context.Context, rdb redis.UniversalClient, wait Replicas, fill func(redis.Pipeliner)) *redis.IntCmd {
	var waitCmd *redis.IntCmd
	_, _ = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		fill(pipe)
		if wait.N > 0 {
			waitCmd = server.QueueWait(ctx, pipe, wait.N, wait.Timeout)
		}
		return nil
	})
	return waitCmd
}

// queue adds the write's command to pipe.
func (w Write) queue(ctx context.Context, pipe redis.Pipeliner) redis.Cmder {
	switch {
	case w.Park != nil:
		cmd, _ := w.Park.Cmd(ctx, pipe)
		return cmd
	case w.Offload != nil:
		return payload.Cmd(ctx, pipe, *w.Offload)
	default:
		cmd := redis.NewStringCmd(ctx, w.XAdd...)
		_ = pipe.Process(ctx, cmd)
		return cmd
	}
}
