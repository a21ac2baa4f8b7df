package publish

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/streamq-dev/streamq/internal/clock"
)

// maxResends caps the messages a resendBook remembers: beyond it the oldest are forgotten,
// and such a message sent again gets a new number (appended again if its first send was
// appended after all: a duplicate, never a loss).
const maxResends = 100_000

// resendBook remembers the producer and sequence number of each message whose Publish did
// not see it appended (an error, or a caller that stopped waiting), for the idempotency
// window: the same message published again to this Publisher keeps them, so the append
// drops it if its first send was appended after all. A caller that stops waiting leaves a
// pending entry until its writes were sent (numbered): a Publish of the same message waits
// for it (settled) instead of numbering it anew.
type resendBook struct {
	window time.Duration
	clock  clock.Clock

	size    atomic.Int64 // len(entries): a Publish that sees 0 takes no lock
	mu      sync.Mutex
	entries map[resendKey]*list.Element // of *resendEntry
	order   list.List                   // the entries, oldest first
}

type resendKey struct{ topic, uuid string }

type resendEntry struct {
	key       resendKey
	partition int
	producer  string
	seq       uint64
	at        time.Time
	sent      chan struct{} // closed once the numbers are known; nil when they are
}

func newResendBook(window time.Duration, clk clock.Clock) *resendBook {
	return &resendBook{window: window, clock: clk, entries: map[resendKey]*list.Element{}}
}

// number gives w the producer and number its message had, when it was sent to the same
// partition before and not seen appended.
func (b *resendBook) number(topic, uuid string, w *Write) {
	if b.size.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.entries[resendKey{topic, uuid}]
	if !ok {
		return
	}
	e := el.Value.(*resendEntry)
	if e.sent == nil && e.partition == w.Partition && b.clock.Now().Sub(e.at) < b.window {
		w.Seq.Producer, w.Seq.Seq = e.producer, e.seq
	}
}

// settled waits until no message of msgs is pending: sent by a caller that stopped waiting
// and not numbered yet. It returns ctx's error when ctx ends first.
func (b *resendBook) settled(ctx context.Context, topic string, msgs []*message.Message) error {
	for b.size.Load() > 0 {
		sent := b.pending(topic, msgs)
		if sent == nil {
			return nil
		}
		select {
		case <-sent:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// pending is the channel of the first pending message of msgs; nil when none is.
func (b *resendBook) pending(topic string, msgs []*message.Message) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		if el, ok := b.entries[resendKey{topic, m.UUID}]; ok && el.Value.(*resendEntry).sent != nil {
			return el.Value.(*resendEntry).sent
		}
	}
	return nil
}

// pend marks the messages of a caller that is about to stop waiting, before the flusher may
// call remember for them.
func (b *resendBook) pend(topic string, msgs []*message.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for _, m := range msgs {
		b.put(&resendEntry{key: resendKey{topic, m.UUID}, at: now, sent: make(chan struct{})})
	}
	b.expire(now)
}

// unpend takes pend back: the request finished before the caller stopped waiting, and the
// caller settles its results itself.
func (b *resendBook) unpend(topic string, msgs []*message.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		b.drop(resendKey{topic, m.UUID})
	}
}

// remember records a numbered write whose append was not seen.
func (b *resendBook) remember(topic, uuid string, w Write) {
	unnumbered := w.Seq == nil || w.Seq.Seq == 0
	if unnumbered && b.size.Load() == 0 {
		return // a plain write of a Publish that failed: nothing to keep or settle
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	key := resendKey{topic, uuid}
	if unnumbered { // nothing to keep; a pending mark is settled
		if el, ok := b.entries[key]; ok && el.Value.(*resendEntry).sent != nil {
			b.drop(key)
		}
		return
	}
	now := b.clock.Now()
	b.put(&resendEntry{key: key, partition: w.Partition, producer: w.Seq.Producer, seq: w.Seq.Seq, at: now})
	b.expire(now)
}

// rememberAll keeps the numbers of every sequenced write of a Publish that failed, or whose
// caller stopped waiting: the caller sends them again, and each keeps its number, so the
// append drops those that were appended (on a cluster some nodes may have appended theirs).
func (b *resendBook) rememberAll(topic string, msgs []*message.Message, writes []Write) {
	for i, w := range writes {
		b.remember(topic, msgs[i].UUID, w)
	}
}

// forgetAll forgets the numbers of a Publish that succeeded.
func (b *resendBook) forgetAll(topic string, msgs []*message.Message, writes []Write) {
	for i, w := range writes {
		if w.Seq != nil {
			b.forget(topic, msgs[i].UUID)
		}
	}
}

// forget drops a message seen appended (or dropped as a duplicate).
func (b *resendBook) forget(topic, uuid string) {
	if b.size.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop(resendKey{topic, uuid})
}

// put replaces e.key's entry by e, the newest.
func (b *resendBook) put(e *resendEntry) {
	b.drop(e.key)
	b.entries[e.key] = b.order.PushBack(e)
	b.size.Store(int64(len(b.entries)))
}

// drop removes key's entry, waking whoever waits for it.
func (b *resendBook) drop(key resendKey) {
	el, ok := b.entries[key]
	if !ok {
		return
	}
	if e := el.Value.(*resendEntry); e.sent != nil {
		close(e.sent)
	}
	b.order.Remove(el)
	delete(b.entries, key)
	b.size.Store(int64(len(b.entries)))
}

// expire drops the entries older than the window, and the oldest beyond maxResends. A
// pending entry is dropped too: its flusher is long done or gone.
func (b *resendBook) expire(now time.Time) {
	for el := b.order.Front(); el != nil; el = b.order.Front() {
		e := el.Value.(*resendEntry)
		if now.Sub(e.at) < b.window && len(b.entries) <= maxResends {
			return
		}
		b.drop(e.key)
	}
}
