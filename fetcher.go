package streamq

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/redis/go-redis/v9"

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
	if _, cluster := sub.rdb.(*redis.ClusterClient); cluster {
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

// ready lists the streams whose workers want more entries.
func (f *fetcher) ready() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var streams []string
	for s, w := range f.workers {
		if !w.isStopping() && w.needsMore() {
			streams = append(streams, s)
		}
	}
	return streams
}

func (f *fetcher) loop() {
	defer close(f.done)
	ctx, cancel := f.sub.loopCtx()
	defer cancel()
	backoff := newBackoff(50*time.Millisecond, 2*time.Second)
	for {
		streams := f.ready()
		if len(streams) == 0 {
			select {
			case <-f.wake:
				continue
			case <-f.quit:
				return
			}
		}
		if err := f.read(ctx, streams); err != nil {
			f.sub.logger.Error("Read failed, retrying", err, watermill.LogFields{"retry_in": backoff.peek()})
			if !f.pause(backoff.next()) {
				return
			}
			continue
		}
		backoff.reset()
		select {
		case <-f.quit:
			return
		default:
		}
	}
}

func (f *fetcher) read(ctx context.Context, streams []string) error {
	f.readMu.Lock()
	defer f.readMu.Unlock()
	cfg := f.sub.cfg
	res, err := stream.Read(ctx, f.sub.rdb, cfg.ConsumerGroup, f.sub.member, streams, int64(cfg.BatchCount), cfg.BlockTime)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, xs := range res {
		if w, ok := f.workers[xs.Stream]; ok && len(xs.Messages) > 0 {
			w.push(xs.Messages, nil)
		}
	}
	return nil
}

func (f *fetcher) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.quit:
		return false
	}
}

// backoff doubles a wait from min to max.
type backoff struct{ min, max, cur time.Duration }

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max, cur: min} }

func (b *backoff) peek() time.Duration { return b.cur }

func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	return d
}

func (b *backoff) reset() { b.cur = b.min }
