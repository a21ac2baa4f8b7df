package publish

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/clock"
)

const testResendWindow = time.Minute

// newTestResendBook is a resendBook of the window testResendWindow on a fake clock.
func newTestResendBook() (*resendBook, *clock.Fake) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	return newResendBook(testResendWindow, clk), clk
}

// sentWrite is a sequenced write to partition part that a flusher numbered seq as producer.
func sentWrite(part int, producer string, seq uint64) Write {
	return Write{Partition: part, Seq: &Sequenced{Producer: producer, Seq: seq}}
}

// numbered is the producer and number the book gives a new sequenced write of uuid on topic
// to partition part ("" and 0: none, the flusher numbers it).
func numbered(b *resendBook, topic, uuid string, part int) (string, uint64) {
	w := Write{Partition: part, Seq: &Sequenced{}}
	b.number(topic, uuid, &w)
	return w.Seq.Producer, w.Seq.Seq
}

// assertUnnumbered checks that the book leaves a new write of uuid unnumbered.
func assertUnnumbered(t *testing.T, b *resendBook, topic, uuid string, part int, msgAndArgs ...any) {
	t.Helper()
	producer, seq := numbered(b, topic, uuid, part)
	assert.Empty(t, producer, msgAndArgs...)
	assert.Zero(t, seq, msgAndArgs...)
}

// assertNumbered checks that the book gives a new write of uuid the producer and number.
func assertNumbered(t *testing.T, b *resendBook, topic, uuid string, part int, producer string, seq uint64, msgAndArgs ...any) {
	t.Helper()
	gotProducer, gotSeq := numbered(b, topic, uuid, part)
	assert.Equal(t, producer, gotProducer, msgAndArgs...)
	assert.Equal(t, seq, gotSeq, msgAndArgs...)
}

// TestResendBookLeavesAWriteUnnumberedWhenNothingIsRemembered: an empty book, or one that
// remembers other messages, leaves the write to its flusher's Sequencer.
func TestResendBookLeavesAWriteUnnumberedWhenNothingIsRemembered(t *testing.T) {
	t.Parallel()
	b, _ := newTestResendBook()
	assertUnnumbered(t, b, "orders", "u1", 0, "empty book")
	assert.Zero(t, b.size.Load())

	b.remember("orders", "u1", sentWrite(0, "p-0", 3))
	assertUnnumbered(t, b, "orders", "u2", 0, "another message is remembered")
}

// TestResendBookGivesARememberedMessageItsNumberAgain: a message remembered after a failed
// Publish gets the same producer and number when it is published again, and the flusher's
// Sequencer then keeps them.
func TestResendBookGivesARememberedMessageItsNumberAgain(t *testing.T) {
	t.Parallel()
	b, clk := newTestResendBook()
	b.remember("orders", "u1", sentWrite(2, "abc-0", 7))
	b.remember("orders", "u2", sentWrite(1, "abc-1", 40))
	assert.EqualValues(t, 2, b.size.Load())

	assertNumbered(t, b, "orders", "u1", 2, "abc-0", 7)
	assertNumbered(t, b, "orders", "u2", 1, "abc-1", 40)
	clk.Advance(testResendWindow - time.Nanosecond)
	assertNumbered(t, b, "orders", "u1", 2, "abc-0", 7, "still within the window")
	assertNumbered(t, b, "orders", "u1", 2, "abc-0", 7, "number does not consume the entry")

	w := Write{Partition: 2, Seq: &Sequenced{Record: "k"}}
	b.number("orders", "u1", &w)
	fresh := Write{Partition: 2, Seq: &Sequenced{Record: "k"}}
	seq := &Sequencer{Producer: "xyz-0"}
	seq.Number([]*Call{{Writes: []Write{w, fresh}}})
	assert.Equal(t, Sequenced{Record: "k", Producer: "abc-0", Seq: 7}, *w.Seq, "the resend keeps its number")
	assert.Equal(t, Sequenced{Record: "k", Producer: "xyz-0", Seq: 1, fresh: true}, *fresh.Seq, "a new message gets the flusher's")
}

// TestResendBookMatchesOnlyTheSameTopicUUIDAndPartition: a remembered number is given only
// to the same message (topic and UUID) sent to the same partition.
func TestResendBookMatchesOnlyTheSameTopicUUIDAndPartition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		topic, uuid string
		part        int
		match       bool
	}{
		{"same message, same partition", "orders", "u1", 3, true},
		{"another partition (the topic grew)", "orders", "u1", 0, false},
		{"another topic", "payments", "u1", 3, false},
		{"another uuid", "orders", "u2", 3, false},
		{"topic and uuid swapped", "u1", "orders", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, _ := newTestResendBook()
			b.remember("orders", "u1", sentWrite(3, "abc-0", 9))
			if tc.match {
				assertNumbered(t, b, tc.topic, tc.uuid, tc.part, "abc-0", 9)
				return
			}
			assertUnnumbered(t, b, tc.topic, tc.uuid, tc.part)
		})
	}
}

// TestResendBookForgetsAfterTheWindow: once the idempotency window has passed since the
// failed Publish, the message is numbered anew (its producer key may be gone in Redis), and
// the entry is dropped at the next remember.
func TestResendBookForgetsAfterTheWindow(t *testing.T) {
	t.Parallel()
	b, clk := newTestResendBook()
	b.remember("orders", "old", sentWrite(0, "abc-0", 1))
	clk.Advance(testResendWindow / 2)
	b.remember("orders", "young", sentWrite(0, "abc-0", 2))

	clk.Advance(testResendWindow/2 - time.Nanosecond)
	assertNumbered(t, b, "orders", "old", 0, "abc-0", 1, "a nanosecond before the window ends")
	clk.Advance(time.Nanosecond)
	assertUnnumbered(t, b, "orders", "old", 0, "the window has passed")
	assertNumbered(t, b, "orders", "young", 0, "abc-0", 2, "remembered later: still within its window")

	b.remember("orders", "new", sentWrite(0, "abc-0", 3))
	b.mu.Lock()
	_, old := b.entries[resendKey{"orders", "old"}]
	b.mu.Unlock()
	assert.False(t, old, "the expired entry is dropped")
	assert.EqualValues(t, 2, b.size.Load())

	clk.Advance(testResendWindow)
	assertUnnumbered(t, b, "orders", "young", 0)
	assertUnnumbered(t, b, "orders", "new", 0)
}

// TestResendBookRememberAgainRestartsTheWindow: a resend that failed again is remembered
// from its new failure.
func TestResendBookRememberAgainRestartsTheWindow(t *testing.T) {
	t.Parallel()
	b, clk := newTestResendBook()
	b.remember("orders", "u1", sentWrite(0, "abc-0", 5))
	clk.Advance(testResendWindow - time.Second)
	b.remember("orders", "u1", sentWrite(0, "abc-0", 5))
	clk.Advance(2 * time.Second)
	assertNumbered(t, b, "orders", "u1", 0, "abc-0", 5)
	assert.EqualValues(t, 1, b.size.Load())
}

// TestResendBookForgetDropsTheMessage: a Publish that saw the message appended forgets it;
// forgetting what the book does not hold is harmless.
func TestResendBookForgetDropsTheMessage(t *testing.T) {
	t.Parallel()
	b, _ := newTestResendBook()
	b.forget("orders", "none") // empty: no lock taken, nothing happens
	b.remember("orders", "u1", sentWrite(0, "abc-0", 1))
	b.remember("orders", "u2", sentWrite(0, "abc-0", 2))
	b.forget("orders", "u1")
	b.forget("payments", "u2") // another topic
	assertUnnumbered(t, b, "orders", "u1", 0, "forgotten")
	assertNumbered(t, b, "orders", "u2", 0, "abc-0", 2, "the other message is kept")
	assert.EqualValues(t, 1, b.size.Load())
	b.forget("orders", "u2")
	assert.Zero(t, b.size.Load())
	assertUnnumbered(t, b, "orders", "u2", 0)

	b.remember("orders", "u1", sentWrite(0, "abc-1", 8))
	assertNumbered(t, b, "orders", "u1", 0, "abc-1", 8, "remembered again after a forget")
}

// TestResendBookIgnoresUnnumberedWrites: a write without a number (never sent: no Seq, or
// Seq.Seq still 0) is not remembered.
func TestResendBookIgnoresUnnumberedWrites(t *testing.T) {
	t.Parallel()
	b, _ := newTestResendBook()
	b.remember("orders", "plain", Write{Partition: 0, XAdd: []any{"XADD"}})
	b.remember("orders", "once", Write{Partition: 0, Once: &Once{UUID: "once"}})
	b.remember("orders", "unsent", Write{Partition: 0, Seq: &Sequenced{Producer: "abc-0"}})
	assert.Zero(t, b.size.Load())
	b.mu.Lock()
	assert.Empty(t, b.entries)
	assert.Zero(t, b.order.Len())
	b.mu.Unlock()
	assertUnnumbered(t, b, "orders", "unsent", 0)

	b.remember("orders", "u1", sentWrite(0, "abc-0", 4))
	b.remember("orders", "u1", Write{Partition: 0, Seq: &Sequenced{}})
	assertNumbered(t, b, "orders", "u1", 0, "abc-0", 4, "an unnumbered write does not replace a remembered one")
}

// TestResendBookCapForgetsTheOldest: beyond maxResends messages the oldest is forgotten (a
// resend of it may then be appended twice: a duplicate, never a loss).
func TestResendBookCapForgetsTheOldest(t *testing.T) {
	t.Parallel()
	b, clk := newTestResendBook()
	for i := range maxResends {
		b.remember("orders", "u"+strconv.Itoa(i), sentWrite(i%4, "abc-0", uint64(i+1)))
		if i%1000 == 0 {
			clk.Advance(time.Millisecond) // all within the window, in order
		}
	}
	require.EqualValues(t, maxResends, b.size.Load())
	assertNumbered(t, b, "orders", "u0", 0, "abc-0", 1, "at the cap nothing is forgotten")

	b.remember("orders", "last", sentWrite(1, "abc-1", 1))
	assert.EqualValues(t, maxResends, b.size.Load(), "still at the cap")
	assertUnnumbered(t, b, "orders", "u0", 0, "the oldest is forgotten")
	assertNumbered(t, b, "orders", "u1", 1, "abc-0", 2, "the second oldest is kept")
	assertNumbered(t, b, "orders", "last", 1, "abc-1", 1, "the newest is kept")

	b.remember("orders", "after", sentWrite(2, "abc-1", 2))
	assertUnnumbered(t, b, "orders", "u1", 1, "then the next oldest")
	assertNumbered(t, b, "orders", "u2", 2, "abc-0", 3)
	assert.EqualValues(t, maxResends, b.size.Load())
}

// TestResendBookCapForgetsTheOldestAfterAForgetAndRememberAgain: a message forgotten (its
// Publish succeeded) and remembered again later (a later Publish of it failed) is a new
// entry: at the cap the oldest entry is forgotten, not it.
func TestResendBookCapForgetsTheOldestAfterAForgetAndRememberAgain(t *testing.T) {
	t.Parallel()
	b, clk := newTestResendBook()
	b.remember("orders", "first", sentWrite(0, "abc-0", 1)) // a caller that never sends it again
	b.remember("orders", "again", sentWrite(0, "abc-0", 2))
	b.forget("orders", "again")
	for i := range maxResends - 1 {
		b.remember("orders", "u"+strconv.Itoa(i), sentWrite(0, "abc-0", uint64(i+3)))
	}
	require.EqualValues(t, maxResends, b.size.Load())
	clk.Advance(time.Second)
	b.remember("orders", "again", sentWrite(0, "abc-1", 1)) // one beyond the cap
	assertUnnumbered(t, b, "orders", "first", 0, "the oldest entry is forgotten")
	b.remember("orders", "last", sentWrite(0, "abc-1", 2)) // one beyond the cap again
	assert.EqualValues(t, maxResends, b.size.Load())
	assertUnnumbered(t, b, "orders", "u0", 0, "the oldest entry is forgotten")
	assertNumbered(t, b, "orders", "again", 0, "abc-1", 1, "the entry remembered after u0 is kept")
	assertNumbered(t, b, "orders", "last", 0, "abc-1", 2, "the newest entry is kept")
}

// TestResendBookOrderStaysWithinTheCap: the book's bookkeeping of remembered keys stays
// bounded by maxResends when messages are remembered and forgotten in turn (a Publish fails,
// the resend succeeds) while one old entry stays (a caller that never sent again).
func TestResendBookOrderStaysWithinTheCap(t *testing.T) {
	t.Parallel()
	b, _ := newTestResendBook()
	b.remember("orders", "stuck", sentWrite(0, "abc-0", 1))
	for i := range 2 * maxResends {
		uuid := "u" + strconv.Itoa(i)
		b.remember("orders", uuid, sentWrite(0, "abc-0", uint64(i+2)))
		b.forget("orders", uuid)
	}
	assert.EqualValues(t, 1, b.size.Load())
	b.mu.Lock()
	n := b.order.Len()
	b.mu.Unlock()
	assert.LessOrEqual(t, n, maxResends+1, "order holds at most the cap (and the entry at hand)")
}
