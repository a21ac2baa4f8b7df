package streamq

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/server"
	"github.com/streamq-dev/streamq/internal/stream"
)

// fetcher reads new entries for a set of owned partitions with one blocking XREADGROUP over
// all of them, and hands each partition's entries to its worker. A partition is read only
// when its worker's queue is empty, which bounds prefetch to BatchCount per partition.
//
// On a single node or Sentinel one fetcher serves every partition of a subscription (one
// connection). A multi-key read must stay in one hash slot on a Cluster, so there each
// partition gets its own fetcher.
type fetcher struct {
	sub     *subscription
	mu      sync.Mutex
	workers map[string]*worker // by stream key
	wake    chan struct{}      // cap 1
	readMu  sync.Mutex         // held during a read and its dispatch
	quit    chan struct{}
	done    chan struct{}
}

// fetcherFor returns (starting it if needed) the fetcher serving partition p.
func (sub *subscription) fetcherFor(p int) *fetcher {
	key := 0
	if server.Clustered(sub.rdb) {
		key = p
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if f, ok := sub.fetchers[key]; ok {
		return f
	}
	f := &fetcher{
		sub:     sub,
		workers: map[string]*worker{},
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	sub.fetchers[key] = f
	go f.loop()
	return f
}

func (sub *subscription) stopFetchers() {
	sub.mu.Lock()
	fs := sub.fetchers
	sub.fetchers = map[int]*fetcher{}
	sub.mu.Unlock()
	for _, f := range fs {
		close(f.quit)
		<-f.done
	}
}

func (f *fetcher) add(w *worker) {
	f.mu.Lock()
	f.workers[w.stream] = w
	f.mu.Unlock()
	f.poke()
}

// remove detaches w and waits for a read in progress, so nothing is read for w afterwards.
func (f *fetcher) remove(w *worker) {
	f.mu.Lock()
	if f.workers[w.stream] == w {
		delete(f.workers, w.stream)
	}
	f.mu.Unlock()
	f.readMu.Lock()
	f.readMu.Unlock() //nolint:staticcheck // waiting for the read in progress is the point
}

func (f *fetcher) poke() { signal(f.wake) }

// ready lists the streams whose workers want more entries with the last id each worker
// received and its stray-claim generation, and whether another worker is still busy with
// entries it holds.
func (f *fetcher) ready() (streams, after []string, gens []uint64, busy bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s, w := range f.workers {
		if w.isStopping() || w.leaseExpiresWithin(f.sub.cfg.BlockTime) {
			// Not for a lease that may lapse before the read returns: the group would move
			// past entries that then sit in this member's pending list, where the next
			// owner does not look (it claimed the partition's pending entries when it took
			// the partition), until the pending scan finds them, out of order.
			continue
		}
		want, from, gen := w.readPosition()
		if !want {
			busy = true
			continue
		}
		streams, after, gens = append(streams, s), append(after, from), append(gens, gen)
	}
	return streams, after, gens, busy
}

// busyPoll is how often idle partitions are polled while another partition is busy: new
// entries there wait at most this long (plus a round trip).
const busyPoll = 2 * time.Millisecond

// loop reads while any worker wants entries. When every worker is idle it blocks in Redis
// for up to BlockTime. While some worker is still busy it must not: a blocked read would hold
// back that worker's next batch, so it polls the idle partitions without blocking and then
// waits for a worker to ask or BlockTime to pass.
func (f *fetcher) loop() {
	defer close(f.done)
	ctx, cancel := f.sub.loopCtx()
	defer cancel()
	retry := newBackoff(50*time.Millisecond, 2*time.Second)
	for {
		streams, after, gens, busy := f.ready()
		if len(streams) == 0 {
			if !f.idle(0) {
				return
			}
			continue
		}
		block := f.sub.cfg.BlockTime
		if busy {
			block = -1
		}
		got, err := f.read(ctx, streams, after, gens, block)
		if err != nil {
			f.failed(ctx, err, retry.peek())
			if !f.idle(retry.next()) {
				return
			}
			continue
		}
		retry.reset()
		if busy && !got && !f.idle(min(f.sub.cfg.BlockTime, busyPoll)) {
			return
		}
	}
}

// failed reports a failed read round: a group or stream that disappeared is healed by the
// rebalancer (and logged there), anything else is logged here.
func (f *fetcher) failed(ctx context.Context, err error, retryIn time.Duration) {
	if stream.IsNoGroup(err) {
		f.sub.requestHeal()
		f.sub.logger.Debug("Read found no group, healing", watermill.LogFields{"error": err.Error()})
		return
	}
	server.ReloadOnConnError(ctx, f.sub.rdb, err)
	f.sub.logger.Error("Read failed, retrying", err, watermill.LogFields{"retry_in": retryIn})
}

// idle waits for a worker to ask for entries, or d (0: no time limit); false means quit.
func (f *fetcher) idle(d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-f.wake:
		return true
	case <-timeout:
		return true
	case <-f.quit:
		return false
	}
}

// read runs one read round over streams (block < 0: without BLOCK) and queues what came
// back; got reports whether anything did. A partition whose lost entries turned up gets
// only those this round: its new entries stay pending for this member, after them, and the
// next round's re-read returns them in order. A partition with stray entries (pending for
// another consumer) gets nothing this round: its worker claims them first. Nor does one
// whose worker claimed strays while the round ran (gens): what the round read stays
// pending for this member, and the next re-read returns it in order with the claimed ones.
func (f *fetcher) read(ctx context.Context, streams, after []string, gens []uint64, block time.Duration) (got bool, err error) {
	f.readMu.Lock()
	defer f.readMu.Unlock()
	cfg := f.sub.cfg
	lost, fresh, stray, err := stream.Read(ctx, f.sub.rdb, cfg.ConsumerGroup, f.sub.member, streams, after, int64(cfg.BatchCount), block)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var skip map[string]bool // allocated only in the rare round that skips a partition
	skipNow := func(s string) {
		if skip == nil {
			skip = map[string]bool{}
		}
		skip[s], got = true, true
	}
	for i, s := range streams {
		if w, ok := f.workers[s]; ok && (stray[s] || w.claimedSince(gens[i])) {
			skipNow(s)
		}
	}
	for s := range stray {
		if w, ok := f.workers[s]; ok {
			w.requestStrayClaim()
		}
	}
	for _, xs := range lost {
		if w, ok := f.workers[xs.Stream]; ok && len(xs.Entries) > 0 && !skip[xs.Stream] {
			w.recover(xs.Entries)
			skipNow(xs.Stream) // its new entries: after the lost ones, next round
		}
	}
	for _, xs := range fresh {
		if w, ok := f.workers[xs.Stream]; ok && len(xs.Entries) > 0 && !skip[xs.Stream] {
			w.push(xs.Entries, nil)
			got = true
		}
	}
	return got, nil
}

// backoff doubles a wait from min to max (from 10 ms when min is 0).
type backoff struct{ min, max, cur time.Duration }

func newBackoff(lo, hi time.Duration) *backoff { return &backoff{min: lo, max: hi, cur: lo} }

func (b *backoff) peek() time.Duration { return b.cur }

func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(max(2*b.cur, 10*time.Millisecond), b.max)
	return d
}

func (b *backoff) reset() { b.cur = b.min }
