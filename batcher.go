package streamq

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamq-dev/streamq/internal/payload"
	"github.com/streamq-dev/streamq/internal/retry"
	"github.com/streamq-dev/streamq/internal/server"
)

// batcher coalesces concurrent Publish calls into pipelines. Flushers take whatever is
// queued (up to MaxPipelineSize writes, never splitting one call) and send it in one round
// trip, so an idle publisher adds no latency and a busy one sends many messages per trip.
// Each caller gets the results of its own writes. Under MinReplicas every pipeline ends with
// one WAIT, whose verdict every caller of the pipeline gets.
type batcher struct {
	rdb     redis.UniversalClient
	maxSize int
	wait    replicaWait
	queue   chan *request
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// replicaWait is PublisherConfig.MinReplicas and ReplicaTimeout: the WAIT that ends each
// pipeline; none when replicas is 0.
type replicaWait struct {
	replicas int
	timeout  time.Duration
}

// request is one Publish call's writes and, once done is signalled, what their pipeline did.
// Requests are pooled: a caller that saw done returns its request for reuse.
type request struct {
	writes []write
	flushed
	done chan struct{} // buffered: the flusher signals once and never blocks
}

// flushed is what a pipeline did for one Publish call: its writes' commands, and the verdict
// of the pipeline's WAIT (nil when MinReplicas is off or was met; else ErrNotReplicated).
type flushed struct {
	cmds       []redis.Cmder
	replicated error
}

var requests = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

func newBatcher(rdb redis.UniversalClient, flushers, maxSize, queue int, wait replicaWait) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	b := &batcher{rdb: rdb, maxSize: maxSize, wait: wait, queue: make(chan *request, queue), ctx: ctx, cancel: cancel}
	b.wg.Add(flushers)
	for i := 0; i < flushers; i++ {
		go b.loop()
	}
	return b
}

// submit queues writes and waits for their round trip, or for ctx. When ctx ends first the
// writes may still be sent.
func (b *batcher) submit(ctx context.Context, writes []write) (flushed, error) {
	req := requests.Get().(*request)
	req.writes = writes
	if ctx.Done() == nil { // no select for a context that never ends (most messages')
		b.queue <- req
		<-req.done
		return req.release(), nil
	}
	select {
	case b.queue <- req:
	case <-ctx.Done():
		req.writes = nil
		requests.Put(req)
		return flushed{}, ctx.Err()
	}
	select {
	case <-req.done:
		return req.release(), nil
	case <-ctx.Done():
		return flushed{}, ctx.Err() // the flusher still holds req: it is not reused
	}
}

// release returns the request to the pool and what its pipeline did to the caller.
func (r *request) release() flushed {
	f := r.flushed
	r.writes, r.flushed = nil, flushed{}
	requests.Put(r)
	return f
}

// close stops the flushers once the queue is empty. No submit may run any more.
func (b *batcher) close() {
	close(b.queue)
	b.wg.Wait()
	b.cancel()
}

func (b *batcher) loop() {
	defer b.wg.Done()
	for req := range b.queue {
		b.linger()
		b.flush(b.gather(req))
	}
}

// linger yields to the goroutines that are about to publish while they keep coming, a few
// times at most: a pipeline then carries more messages. When nothing else is runnable a
// yield returns at once, so an idle publisher adds no latency.
func (b *batcher) linger() {
	for i, n := 0, -1; i < 3 && len(b.queue) > n && len(b.queue) < b.maxSize; i++ {
		n = len(b.queue)
		runtime.Gosched()
	}
}

// gather takes first and whatever else is queued, up to maxSize writes.
func (b *batcher) gather(first *request) []*request {
	reqs, n := []*request{first}, len(first.writes)
	for n < b.maxSize {
		select {
		case r, ok := <-b.queue:
			if !ok {
				return reqs
			}
			reqs = append(reqs, r)
			n += len(r.writes)
		default:
			return reqs
		}
	}
	return reqs
}

func (b *batcher) flush(reqs []*request) {
	ctx := b.ctx
	var wait *redis.IntCmd
	_, _ = b.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, r := range reqs {
			r.cmds = make([]redis.Cmder, len(r.writes))
			for i, w := range r.writes {
				r.cmds[i] = w.queue(ctx, pipe)
			}
		}
		if b.wait.replicas > 0 {
			wait = server.QueueWait(ctx, pipe, b.wait.replicas, b.wait.timeout)
		}
		return nil
	})
	replicated := b.wait.verdict(wait)
	for _, r := range reqs {
		r.replicated = replicated
		r.done <- struct{}{}
	}
}

// verdict is nil when the pipeline's WAIT (nil: none sent) counted enough replicas.
func (w replicaWait) verdict(wait *redis.IntCmd) error {
	if wait == nil {
		return nil
	}
	acked, err := wait.Result()
	if err != nil {
		return fmt.Errorf("%w: WAIT %d %d: %w", ErrNotReplicated, w.replicas, w.timeout.Milliseconds(), err)
	}
	if acked < int64(w.replicas) {
		return &ReplicationError{Wanted: w.replicas, Acked: int(acked), Timeout: w.timeout}
	}
	return nil
}

// queue adds the write's command to pipe.
func (w write) queue(ctx context.Context, pipe redis.Pipeliner) redis.Cmder {
	switch {
	case w.park != nil:
		cmd, _ := retry.ParkCmd(ctx, pipe, w.park.zset, w.park.items, w.park.id, w.park.due, w.park.item)
		return cmd
	case w.offload != nil:
		return payload.Cmd(ctx, pipe, *w.offload)
	default:
		cmd := redis.NewStringCmd(ctx, w.xadd...)
		_ = pipe.Process(ctx, cmd)
		return cmd
	}
}
