// Package position is one owned partition's read position: what was received, what waits to
// be delivered, what a read reply lost, what a stale owner left, and whether a read round
// raced a claim. It does no I/O: the fetcher and the claimer report what Redis returned, the
// delivery loop takes entries, the acker reports what it acked, and the rules of what that
// means live here, under one lock.
//
// The rules, each with a row in position_test.go:
//   - An id is queued once while it is held (queued or in flight), however often reads,
//     re-reads and claims return it; an ack releases it.
//   - Received is the highest id queued; it only grows. A re-read of this member's pending
//     entries (after a lost read reply) counts only ids above it, deleted ones included, so
//     the next re-read starts past them.
//   - A re-read entry whose fields are gone (deleted from the stream) is not delivered: it
//     is handed back to be acked.
//   - The queue asks for more when it falls to the low-water mark (half a batch), so
//     prefetch stays within 1.5 batches; an empty queue always asks.
//   - Strays (another consumer's pending entries, from a stale owner's late read) are
//     claimed before anything else is taken; they are queued by the next re-read, with the
//     delivery counts the claim reported, not by the claim.
//   - A read round sent before or while a stray claim runs is not applied: the claim
//     generation is odd while a claim runs and changes at both ends.
//   - The commit frontier an ack batch records is below every id still held: acks that
//     complete out of order never move it past an entry not acked yet.
package position

import (
	"sync"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// Entry is a queued stream entry with its delivery count (1 for a first read).
type Entry struct {
	ID     string
	Values map[string]any
	Count  int64
}

// Position is the read position of one partition. Its methods are safe for concurrent use.
type Position struct {
	lowWater int
	wake     chan struct{} // cap 1: entries were queued or strays wait

	mu       sync.Mutex
	queue    []Entry
	known    map[string]struct{}
	received string // highest id queued: the member's pending entries after it were lost
	wantMore bool
	strays   bool             // another consumer holds pending entries: claim them
	claimGen uint64           // odd while a stray claim runs
	claimed  map[string]int64 // delivery counts of claimed strays until their re-read
}

// New returns the position of a partition read batch entries at a time.
func New(batch int) *Position {
	return &Position{lowWater: batch / 2, wake: make(chan struct{}, 1), known: map[string]struct{}{}}
}

// Wake is signalled when entries were queued or a stray claim was asked for.
func (p *Position) Wake() <-chan struct{} { return p.wake }

func (p *Position) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Push queues entries a read or a claim returned, skipping ids already held. counts are the
// delivery counts of claimed entries (nil: first reads, count 1).
func (p *Position) Push(msgs []stream.Entry, counts map[string]int64) {
	p.mu.Lock()
	p.queueLocked(msgs, counts)
	p.mu.Unlock()
	p.signal()
}

func (p *Position) queueLocked(msgs []stream.Entry, counts map[string]int64) {
	for _, m := range msgs {
		if _, dup := p.known[m.ID]; dup {
			continue
		}
		p.known[m.ID] = struct{}{}
		c := int64(1)
		if n, ok := counts[m.ID]; ok {
			c = n
		}
		p.queue = append(p.queue, Entry{ID: m.ID, Values: m.Values, Count: c})
	}
	// Reads and claims return ids in order: the last one is the highest.
	if n := len(msgs); n > 0 && streamid.Less(p.received, msgs[n-1].ID) {
		p.received = msgs[n-1].ID
	}
	p.wantMore = len(p.queue) <= p.lowWater
}

// Pop takes the next queued entry. refill reports that the queue just fell to the low-water
// mark (or is empty): the caller asks the fetcher for the next batch.
func (p *Position) Pop() (e Entry, ok, refill bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.wantMore = true
		return Entry{}, false, true
	}
	e = p.queue[0]
	p.queue[0] = Entry{}
	p.queue = p.queue[1:]
	refill = !p.wantMore && len(p.queue) <= p.lowWater
	if refill {
		p.wantMore = true
	}
	return e, true, refill
}

// ReadFrom is what a read round needs, under one lock: whether the partition wants
// entries, the highest id received ("0-0" before any), and the claim generation the round
// starts from (see ClaimedSince).
func (p *Position) ReadFrom() (want bool, after string, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	after = p.received
	if after == "" {
		after = "0-0"
	}
	return p.wantMore, after, p.claimGen
}

// Received is the highest id queued so far, "" before any.
func (p *Position) Received() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.received
}

// Forget releases acked ids: a later read or claim of one queues it again.
func (p *Position) Forget(acked []stream.Acked) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range acked {
		delete(p.known, e.ID)
	}
}

// Recover applies a re-read of this member's pending entries (their read reply was lost, or
// a stray claim moved them here): entries above Received are queued (with the delivery
// counts a stray claim recorded), deleted ones are returned for the caller to ack, and
// Received moves past all of them. queued counts the entries that were new.
func (p *Position) Recover(msgs []stream.Entry) (queued int, deleted []string) {
	if len(msgs) == 0 {
		return 0, nil
	}
	var live []stream.Entry
	p.mu.Lock()
	for _, m := range msgs {
		switch {
		case !streamid.Less(p.received, m.ID):
		case m.Values == nil:
			deleted = append(deleted, m.ID)
		default:
			live = append(live, m)
		}
	}
	if last := msgs[len(msgs)-1].ID; streamid.Less(p.received, last) {
		p.received = last // past the deleted ones too, or the re-read would return them again
	}
	p.queueLocked(live, p.claimed)
	p.forgetClaimedLocked()
	p.mu.Unlock()
	if len(live) > 0 {
		p.signal()
	}
	return len(live), deleted
}

// forgetClaimedLocked drops the delivery counts of claimed strays received by now.
func (p *Position) forgetClaimedLocked() {
	for id := range p.claimed {
		if !streamid.Less(p.received, id) {
			delete(p.claimed, id)
		}
	}
	if len(p.claimed) == 0 {
		p.claimed = nil
	}
}

// RequestStrays records that another consumer holds pending entries of the partition: they
// are claimed before anything else is taken.
func (p *Position) RequestStrays() {
	p.mu.Lock()
	p.strays = true
	p.mu.Unlock()
	p.signal()
}

// TakeStrays reports and clears a RequestStrays.
func (p *Position) TakeStrays() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.strays
	p.strays = false
	return s
}

// BeginClaim marks the start of a stray claim; the returned func marks its end. Read rounds
// that started before the end are not applied (ClaimedSince).
func (p *Position) BeginClaim() (end func()) {
	p.bump()
	return p.bump
}

func (p *Position) bump() {
	p.mu.Lock()
	p.claimGen++
	p.mu.Unlock()
}

// Claimed records the delivery counts of strays a claim moved here; the re-read that queues
// them uses these counts.
func (p *Position) Claimed(counts map[string]int64) {
	if len(counts) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed == nil {
		p.claimed = make(map[string]int64, len(counts))
	}
	for id, n := range counts {
		p.claimed[id] = n
	}
}

// ClaimedSince reports whether a stray claim ran, or runs, since gen was read: a read round
// sent then may have read the partition before or after the claim moved entries.
func (p *Position) ClaimedSince(gen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return gen != p.claimGen || gen%2 == 1
}

// Queued is the number of entries waiting to be delivered.
func (p *Position) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Holds reports whether id is held: queued, in flight, or acked and not yet flushed.
func (p *Position) Holds(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.known[id]
	return ok
}

// Frontier is the commit frontier an ack of acked may record: the highest of its ids below
// every other id still held (queued, with a handler, waiting behind its key, or acked and
// not flushed yet), "" when none is. Acks complete out of order (per-key order,
// MaxInFlightPerPartition > 1, deferred acks): a frontier past an entry still held would
// tell a re-created group, or an operator, that the entry was handled.
func (p *Position) Frontier(acked []stream.Acked) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	batch := make(map[string]struct{}, len(acked))
	for _, a := range acked {
		batch[a.ID] = struct{}{}
	}
	low := "" // the lowest id held besides the batch
	for id := range p.known {
		if _, in := batch[id]; !in && (low == "" || streamid.Less(id, low)) {
			low = id
		}
	}
	best := ""
	for _, a := range acked {
		if (low == "" || streamid.Less(a.ID, low)) && (best == "" || streamid.Less(best, a.ID)) {
			best = a.ID
		}
	}
	return best
}
