package publish

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"
)

// batcher coalesces concurrent Publish calls into pipelines. Flushers take whatever is
// queued (up to Pipeline.MaxSize writes, never splitting one call) and send it in one round
// trip, so an idle publisher adds no latency and a busy one sends many messages per trip.
// Each caller gets the results of its own writes. Under MinReplicas every pipeline ends with
// one WAIT, whose verdict every caller of the pipeline gets. Each flusher is a producer of
// its own: it numbers the sequenced appends it sends (Sequencer), one pipeline after the
// other.
type batcher struct {
	producer string // the flushers' producer ids are producer-0, producer-1, ...
	rdb      redis.UniversalClient
	cfg      Pipeline
	wait     Replicas // the WAIT that ends each pipeline; none when N is 0
	// notReplicated is the error of a pipeline whose WAIT fell short (Errors.NotReplicated).
	notReplicated func(want Replicas, acked int, err error) error
	queue         chan *request
	ctx           context.Context
	cancel        context.CancelFunc
	wg            sync.WaitGroup
}

// request is one Publish call's writes and, once done is signalled, what their pipeline did.
// Requests are pooled: a caller that saw done returns its request for reuse. A caller that
// stops waiting gives it up, and the flusher then settles it once the pipeline was sent (the
// writes are numbered by then); whichever of the two comes first decides.
type request struct {
	call       Call
	replicated error
	done       chan struct{} // buffered: the flusher signals once and never blocks
	state      atomic.Int32  // pending, finished or given up
	giveUp     giveUp
}

// giveUp is what a caller that stops waiting for its request leaves behind: mark runs before
// it gives up, unmark when the request finished meanwhile (the caller takes its results
// after all), and settle in the flusher once a given-up request was sent.
type giveUp struct{ mark, unmark, settle func() }

const (
	pending int32 = iota
	finished
	givenUp
)

// flushed is what a pipeline did for one Publish call: its writes' results, and the verdict
// of the pipeline's WAIT (nil when Replicas is off or was met; else Errors.NotReplicated's).
type flushed struct {
	results    []Result
	replicated error
}

var requests = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

// newBatcher starts the flushers of cfg.Pipeline; close stops them.
func newBatcher(cfg Config) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	b := &batcher{producer: watermill.NewShortUUID(), rdb: cfg.Client, cfg: cfg.Pipeline, wait: cfg.Replicas,
		notReplicated: cfg.Errors.NotReplicated, queue: make(chan *request, cfg.Pipeline.QueueSize), ctx: ctx, cancel: cancel}
	b.wg.Add(cfg.Pipeline.Flushers)
	for i := range cfg.Pipeline.Flushers {
		go b.loop(&Sequencer{Producer: b.producer + "-" + strconv.Itoa(i)})
	}
	return b
}

// submit queues writes and waits for their round trip, or for ctx. When ctx ends first the
// writes may still be sent: g.settle is called once they were.
func (b *batcher) submit(ctx context.Context, writes []Write, g giveUp) (flushed, error) {
	req := requests.Get().(*request)
	req.call.Writes, req.giveUp = writes, g
	req.state.Store(pending)
	if ctx.Done() == nil { // no select for a context that never ends (most messages')
		b.queue <- req
		<-req.done
		return req.release(), nil
	}
	select {
	case b.queue <- req:
	case <-ctx.Done():
		req.call.Writes = nil
		requests.Put(req)
		return flushed{}, ctx.Err()
	}
	select {
	case <-req.done:
		return req.release(), nil
	case <-ctx.Done():
		g.mark()
		if req.state.CompareAndSwap(pending, givenUp) {
			return flushed{}, ctx.Err() // the flusher still holds req: it is not reused
		}
		g.unmark()
		<-req.done // finished meanwhile: the results are there
		return req.release(), nil
	}
}

// release returns the request to the pool and what its pipeline did to the caller.
func (r *request) release() flushed {
	f := flushed{results: r.call.Results, replicated: r.replicated}
	r.call, r.replicated, r.giveUp = Call{}, nil, giveUp{}
	requests.Put(r)
	return f
}

// close stops the flushers once the queue is empty. No submit may run any more.
func (b *batcher) close() {
	close(b.queue)
	b.wg.Wait()
	b.cancel()
}

func (b *batcher) loop(seq *Sequencer) {
	defer b.wg.Done()
	var calls []*Call // the flusher's own, reused for every pipeline
	for req := range b.queue {
		b.linger()
		calls = b.flush(b.gather(req), calls, seq)
	}
}

// linger yields to the goroutines that are about to publish while they keep coming, a few
// times at most: a pipeline then carries more messages. When nothing else is runnable a
// yield returns at once, so an idle publisher adds no latency.
func (b *batcher) linger() {
	for i, n := 0, -1; i < 3 && len(b.queue) > n && len(b.queue) < b.cfg.MaxSize; i++ {
		n = len(b.queue)
		runtime.Gosched()
	}
}

// gather takes first and whatever else is queued, up to MaxSize writes.
func (b *batcher) gather(first *request) []*request {
	reqs, n := []*request{first}, len(first.call.Writes)
	for n < b.cfg.MaxSize {
		select {
		case r, ok := <-b.queue:
			if !ok {
				return reqs
			}
			reqs = append(reqs, r)
			n += len(r.call.Writes)
		default:
			return reqs
		}
	}
	return reqs
}

// flush numbers the writes of reqs, sends them in one pipeline and signals each request;
// calls is scratch space, returned for the next flush.
func (b *batcher) flush(reqs []*request, calls []*Call, seq *Sequencer) []*Call {
	calls = calls[:0]
	for _, r := range reqs {
		calls = append(calls, &r.call)
	}
	seq.Number(calls)
	acked, err := Flush(b.ctx, b.rdb, calls, b.wait, seq)
	clear(calls) // the requests go back to their callers and the pool
	replicated := b.verdict(acked, err)
	for _, r := range reqs {
		r.replicated = replicated
		if !r.state.CompareAndSwap(pending, finished) {
			r.giveUp.settle() // its caller is gone: the request is not reused
			continue
		}
		r.done <- struct{}{}
	}
	return calls
}

// verdict is nil when Replicas is off or the pipeline's WAIT, which answered acked or err,
// counted enough replicas; else the pipeline's Errors.NotReplicated.
func (b *batcher) verdict(acked int, err error) error {
	if b.wait.N == 0 || (err == nil && acked >= b.wait.N) {
		return nil
	}
	return b.notReplicated(b.wait, acked, err)
}
