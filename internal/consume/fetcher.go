package consume

import (
	"context"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"

	"github.com/streamq-dev/streamq/internal/clock"
	"github.com/streamq-dev/streamq/internal/lease"
	"github.com/streamq-dev/streamq/internal/position"
	"github.com/streamq-dev/streamq/internal/run"
	"github.com/streamq-dev/streamq/internal/store"
	"github.com/streamq-dev/streamq/internal/stream"
)

// feed is one partition a fetcher reads for: its read position (where the entries go), its
// lease term (no read that may outlive the lease), whether it stopped, and where entries
// with nothing to deliver go to be acked.
type feed struct {
	stream string
	pos    *position.Position
	term   *lease.Term
	stop   <-chan struct{}
	skip   func(id string)
	log    watermill.LoggerAdapter
}

func (f *feed) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// fetchDeps is what a fetcher is built from.
type fetchDeps struct {
	reader *store.Reader
	batch  int64
	block  time.Duration
	clock  clock.Clock
	log    watermill.LoggerAdapter
	heal   func()    // a group or stream is missing: ask the rebalancer to heal
	gates  run.Gates // no reads while one is closed (Pause, a paused group)
}

// fetcher reads new entries for a set of owned partitions with one blocking XREADGROUP over
// all of them, and reports each partition's entries to its read position. A partition is
// read only when its position wants entries, which bounds prefetch to 1.5 batches per
// partition.
//
// On a single node or Sentinel one fetcher serves every partition of a subscription (one
// connection). A multi-key read must stay in one hash slot on a Cluster, so there each
// partition gets its own fetcher.
type fetcher struct {
	d      fetchDeps
	run    *run.Runner
	ctx    context.Context // cancelled on stop
	cancel context.CancelFunc
	wake   chan struct{} // cap 1
	readMu sync.Mutex    // held during a read and its dispatch

	mu    sync.Mutex
	feeds map[string]*feed // by stream key
}

// newFetcher returns a fetcher whose reads end when ctx is done or it stops.
func newFetcher(ctx context.Context, d fetchDeps) *fetcher {
	f := &fetcher{d: d, run: run.NewRunner(), wake: make(chan struct{}, 1), feeds: map[string]*feed{}}
	f.ctx, f.cancel = context.WithCancel(ctx)
	return f
}

func (f *fetcher) start() { f.run.Start(f.loop) }

func (f *fetcher) stop() {
	f.cancel()
	f.run.Stop()
}

func (f *fetcher) add(fd *feed) {
	f.mu.Lock()
	f.feeds[fd.stream] = fd
	f.mu.Unlock()
	f.poke()
}

// remove detaches fd and waits for a read in progress, so nothing is read for it afterwards.
func (f *fetcher) remove(fd *feed) {
	f.mu.Lock()
	if f.feeds[fd.stream] == fd {
		delete(f.feeds, fd.stream)
	}
	f.mu.Unlock()
	f.readMu.Lock()
	f.readMu.Unlock() //nolint:staticcheck // waiting for the read in progress is the point
}

func (f *fetcher) poke() { run.Signal(f.wake) }

// round is one read round's request: the streams that want entries, the last id each
// received and its claim generation.
type round struct {
	streams, after []string
	gens           []uint64
	busy           bool // another partition is still busy with entries it holds
}

// ready is the next round's request.
func (f *fetcher) ready() round {
	f.mu.Lock()
	defer f.mu.Unlock()
	var r round
	for s, fd := range f.feeds {
		if fd.stopped() || fd.term.ExpiresWithin(f.d.block) {
			// Not for a lease that may lapse before the read returns: the group would move
			// past entries that then sit in this member's pending list, where the next
			// owner does not look (it claimed the partition's pending entries when it took
			// the partition), until the pending scan finds them, out of order.
			continue
		}
		want, from, gen := fd.pos.ReadFrom()
		if !want {
			r.busy = true
			continue
		}
		r.streams, r.after, r.gens = append(r.streams, s), append(r.after, from), append(r.gens, gen)
	}
	return r
}

// busyPoll is how often idle partitions are polled while another partition is busy: new
// entries there wait at most this long (plus a round trip).
const busyPoll = 2 * time.Millisecond

// loop reads while any partition wants entries. When every partition is idle it blocks in
// Redis for up to BlockTime. While some partition is still busy it must not: a blocked read
// would hold back that partition's next batch, so it polls the idle partitions without
// blocking and then waits for a partition to ask or BlockTime to pass.
func (f *fetcher) loop() {
	retry := run.NewBackoff(50*time.Millisecond, 2*time.Second)
	for {
		if f.d.gates.Paused() && !f.d.gates.WaitOpen(f.run.Quit()) {
			return
		}
		r := f.ready()
		if len(r.streams) == 0 {
			if !f.idle(0) {
				return
			}
			continue
		}
		got, err := f.read(r)
		if err != nil {
			f.failed(err, retry.Peek())
			if !f.idle(retry.Next()) {
				return
			}
			continue
		}
		retry.Reset()
		if r.busy && !got && !f.idle(min(f.d.block, busyPoll)) {
			return
		}
	}
}

// failed reports a failed read round: a group or stream that disappeared is healed by the
// rebalancer (and logged there), anything else is logged here.
func (f *fetcher) failed(err error, retryIn time.Duration) {
	if stream.IsNoGroup(err) {
		f.d.heal()
		f.d.log.Debug("Read found no group, healing", watermill.LogFields{"error": err.Error()})
		return
	}
	f.d.log.Error("Read failed, retrying", err, watermill.LogFields{"retry_in": retryIn})
}

// idle waits for a partition to ask for entries, or d (0: no time limit); false means stop.
func (f *fetcher) idle(d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := f.d.clock.NewTimer(d)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-f.wake:
		return true
	case <-timeout:
		return true
	case <-f.run.Quit():
		return false
	}
}

// read runs one read round (without BLOCK while another partition is busy) and reports what
// came back; got reports whether anything did.
func (f *fetcher) read(r round) (got bool, err error) {
	f.readMu.Lock()
	defer f.readMu.Unlock()
	block := f.d.block
	if r.busy {
		block = -1
	}
	lost, fresh, stray, err := f.d.reader.Read(f.ctx, r.streams, r.after, f.d.batch, block)
	if err != nil {
		if f.ctx.Err() != nil {
			return false, nil
		}
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return applyRound(f.feeds, r, lost, fresh, stray), nil
}

// applyRound reports a read round's reply to the partitions' read positions. A partition
// whose lost entries turned up gets only those this round: its new entries stay pending for
// this member, after them, and the next round's re-read returns them in order. A partition
// with stray entries (pending for another consumer) gets nothing this round: its claimer
// claims them first. Nor does one whose strays were claimed while the round ran (the claim
// generation moved): what the round read stays pending for this member, and the next
// re-read returns it in order with the claimed ones. got reports whether anything came back.
func applyRound(feeds map[string]*feed, r round, lost, fresh []stream.Batch, stray map[string]bool) (got bool) {
	var skip map[string]bool // allocated only in the rare round that skips a partition
	skipNow := func(s string) {
		if skip == nil {
			skip = map[string]bool{}
		}
		skip[s], got = true, true
	}
	for i, s := range r.streams {
		if fd, ok := feeds[s]; ok && (stray[s] || fd.pos.ClaimedSince(r.gens[i])) {
			skipNow(s)
		}
	}
	for s := range stray {
		if fd, ok := feeds[s]; ok {
			fd.pos.RequestStrays()
		}
	}
	for _, xs := range lost {
		if fd, ok := feeds[xs.Stream]; ok && len(xs.Entries) > 0 && !skip[xs.Stream] {
			fd.recover(xs.Entries)
			skipNow(xs.Stream) // its new entries: after the lost ones, next round
		}
	}
	for _, xs := range fresh {
		if fd, ok := feeds[xs.Stream]; ok && len(xs.Entries) > 0 && !skip[xs.Stream] {
			fd.pos.Push(xs.Entries, nil)
			got = true
		}
	}
	return got
}

// recover hands the position a re-read of this member's pending entries it never received
// (their read reply was lost, or a stray claim moved them here). Those deleted from the
// stream meanwhile are acked: nothing to deliver.
func (f *feed) recover(msgs []stream.Entry) {
	queued, deleted := f.pos.Recover(msgs)
	for _, id := range deleted {
		f.skip(id)
	}
	if queued+len(deleted) > 0 {
		f.log.Info("Re-read pending entries this member had not received", watermill.LogFields{
			"count": queued + len(deleted), "first": msgs[0].ID})
	}
}
