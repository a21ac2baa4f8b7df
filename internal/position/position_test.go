package position

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/streamq-dev/streamq/internal/stream"
	"github.com/streamq-dev/streamq/internal/streamid"
)

// batch is the read batch of every table's Position: the low-water mark is 5.
const batch = 10

// entries builds stream entries: "3-0" is a live entry (Values {"id": "3-0"}), "3-0!" one
// deleted from the stream while pending (Values nil).
func entries(ids ...string) []stream.Entry {
	out := make([]stream.Entry, len(ids))
	for i, id := range ids {
		if gone, ok := strings.CutSuffix(id, "!"); ok {
			out[i] = stream.Entry{ID: gone}
			continue
		}
		out[i] = stream.Entry{ID: id, Values: map[string]any{"id": id}}
	}
	return out
}

// seq is the ids "from-0" to "to-0".
func seq(from, to int) []string {
	var ids []string
	for i := from; i <= to; i++ {
		ids = append(ids, strconv.Itoa(i)+"-0")
	}
	return ids
}

// harness is a Position and what the calls made on it returned.
type harness struct {
	t       *testing.T
	p       *Position
	gen     uint64   // the claim generation the last readGen saw
	end     func()   // ends the claim claimRuns began
	popped  []string // "id#count" of the entries pop took
	refills []bool   // pop's refill, one per call
	queued  int      // Recover's queued, summed
	deleted []string // Recover's deleted
	woke    bool     // Wake was signalled by the event
}

// step is one call on the harness's Position.
type step func(*harness)

func push(ids ...string) step { return func(h *harness) { h.p.Push(entries(ids...), nil) } }

func pushCounts(counts map[string]int64, ids ...string) step {
	return func(h *harness) { h.p.Push(entries(ids...), counts) }
}

func pop(n int) step {
	return func(h *harness) {
		for range n {
			e, ok, refill := h.p.Pop()
			h.refills = append(h.refills, refill)
			if ok {
				h.popped = append(h.popped, h.label(e))
			}
		}
	}
}

func reread(ids ...string) step {
	return func(h *harness) {
		q, d := h.p.Recover(entries(ids...))
		h.queued += q
		h.deleted = append(h.deleted, d...)
	}
}

func forget(ids ...string) step {
	return func(h *harness) {
		var acked []stream.Acked
		for _, id := range ids {
			acked = append(acked, stream.Acked{ID: id})
		}
		h.p.Forget(acked)
	}
}

func claimed(counts map[string]int64) step { return func(h *harness) { h.p.Claimed(counts) } }
func requestStrays() step                  { return func(h *harness) { h.p.RequestStrays() } }
func takeStrays() step                     { return func(h *harness) { h.p.TakeStrays() } }
func readGen() step                        { return func(h *harness) { _, _, h.gen = h.p.ReadFrom() } }
func claimRuns() step                      { return func(h *harness) { h.end = h.p.BeginClaim() } }
func claimEnds() step                      { return func(h *harness) { h.end() } }
func claim() step                          { return func(h *harness) { h.p.BeginClaim()() } }
func nothing() step                        { return func(*harness) {} }

// label is "id#count", checking that e carries its own fields.
func (h *harness) label(e Entry) string {
	h.t.Helper()
	if e.Values["id"] != e.ID {
		h.t.Errorf("entry %s popped with values %v", e.ID, e.Values)
	}
	return fmt.Sprintf("%s#%d", e.ID, e.Count)
}

// delivered is what the event popped followed by everything still queued, in order.
func (h *harness) delivered() []string {
	h.t.Helper()
	out := slices.Clone(h.popped)
	for {
		e, ok, _ := h.p.Pop()
		if !ok {
			return out
		}
		out = append(out, h.label(e))
	}
}

func signalled(p *Position) bool {
	select {
	case <-p.Wake():
		return true
	default:
		return false
	}
}

// run builds a Position by state, forgets what those calls returned, and makes event.
func run(t *testing.T, state []step, event step) *harness {
	t.Helper()
	h := &harness{t: t, p: New(batch)}
	for _, s := range state {
		s(h)
	}
	h.popped, h.refills, h.queued, h.deleted = nil, nil, 0, nil
	signalled(h.p)
	event(h)
	h.woke = signalled(h.p)
	return h
}

// Rule: an id is queued once while it is held (queued or in flight); an ack releases it.
func TestHeldOnce(t *testing.T) {
	tests := []struct {
		name  string
		state []step
		event step
		want  []string // delivered from the event on
	}{
		{name: "dup within one push", event: push("1-0", "1-0", "2-0"), want: []string{"1-0#1", "2-0#1"}},
		{name: "queued id read again", state: []step{push("1-0", "2-0")}, event: push("2-0", "3-0"), want: []string{"1-0#1", "2-0#1", "3-0#1"}},
		{name: "in-flight id claimed again by the pending scan", state: []step{push("1-0", "2-0"), pop(2)}, event: pushCounts(map[string]int64{"1-0": 2}, "1-0")},
		{name: "re-read id pushed again", state: []step{reread("4-0", "5-0")}, event: push("5-0", "6-0"), want: []string{"4-0#1", "5-0#1", "6-0#1"}},
		{name: "pushed id re-read", state: []step{push("1-0", "2-0"), pop(1)}, event: reread("1-0", "2-0", "3-0"), want: []string{"2-0#1", "3-0#1"}},
		{name: "in-flight id re-read", state: []step{push("1-0", "2-0"), pop(2)}, event: reread("2-0"), want: nil},
		{name: "forget lets the id be queued again", state: []step{push("1-0"), pop(1), forget("1-0")}, event: pushCounts(map[string]int64{"1-0": 2}, "1-0"), want: []string{"1-0#2"}},
		{name: "forget releases only the acked ids", state: []step{push("1-0", "2-0"), pop(2), forget("1-0")}, event: push("1-0", "2-0"), want: []string{"1-0#1"}},
		{name: "forget of an id not held changes nothing", state: []step{push("1-0")}, event: forget("9-0"), want: []string{"1-0#1"}},
		{name: "forget of a queued id does not unqueue it", state: []step{push("1-0")}, event: forget("1-0"), want: []string{"1-0#1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			if got := h.delivered(); !slices.Equal(got, tt.want) {
				t.Fatalf("delivered %v, want %v", got, tt.want)
			}
		})
	}
}

// Rule: received is the highest id queued; it only grows. ReadFrom says "0-0" before any.
func TestReceived(t *testing.T) {
	tests := []struct {
		name  string
		state []step
		event step
		after string   // ReadFrom's after
		want  []string // delivered from the event on
	}{
		{name: "0-0 before anything was received", event: nothing(), after: "0-0"},
		{name: "0-0 after an empty push", event: push(), after: "0-0"},
		{name: "the last id of a push", event: push("1-0", "2-0", "3-0"), after: "3-0", want: []string{"1-0#1", "2-0#1", "3-0#1"}},
		{name: "ms compared as numbers", state: []step{push("9-0")}, event: push("10-0"), after: "10-0", want: []string{"9-0#1", "10-0#1"}},
		{name: "seq compared as numbers", state: []step{push("1-9")}, event: push("1-10"), after: "1-10", want: []string{"1-9#1", "1-10#1"}},
		{name: "lower ids after higher do not go back", state: []step{push("5-0")}, event: push("2-0", "3-0"), after: "5-0", want: []string{"5-0#1", "2-0#1", "3-0#1"}},
		{name: "held ids pushed again keep it", state: []step{push("1-0", "2-0"), pop(2)}, event: push("1-0", "2-0"), after: "2-0"},
		{name: "acks do not move it", state: []step{push("1-0", "2-0"), pop(2)}, event: forget("1-0", "2-0"), after: "2-0"},
		{name: "a re-read moves it to its last id", state: []step{push("1-0")}, event: reread("2-0", "3-0"), after: "3-0", want: []string{"1-0#1", "2-0#1", "3-0#1"}},
		{name: "a re-read of older ids does not go back", state: []step{push("5-0")}, event: reread("2-0", "3-0"), after: "5-0", want: []string{"5-0#1"}},
		{name: "a claim does not move it", state: []step{push("1-0")}, event: claimed(map[string]int64{"7-0": 2}), after: "1-0", want: []string{"1-0#1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			_, after, _ := h.p.ReadFrom()
			if after != tt.after {
				t.Fatalf("ReadFrom after = %q, want %q", after, tt.after)
			}
			want := tt.after
			if want == "0-0" {
				want = "" // Received says "" where ReadFrom says "0-0"
			}
			if rec := h.p.Received(); rec != want {
				t.Fatalf("Received = %q, want %q", rec, want)
			}
			if got := h.delivered(); !slices.Equal(got, tt.want) {
				t.Fatalf("delivered %v, want %v", got, tt.want)
			}
		})
	}
}

// Rules: a re-read (after a lost read reply) counts only ids above received, deleted ones
// included, so the next re-read starts past them; deleted ones are handed back, not
// delivered. Wake is signalled when it queued something.
func TestRecover(t *testing.T) {
	tests := []struct {
		name    string
		state   []step
		event   step
		queued  int
		deleted []string
		after   string
		want    []string // delivered from the event on
		woke    bool
	}{
		{name: "lost entries are queued in order", state: []step{push("1-0")}, event: reread("2-0", "3-0"), queued: 2, after: "3-0", want: []string{"1-0#1", "2-0#1", "3-0#1"}, woke: true},
		{name: "before anything was received", event: reread("1-0", "2-0"), queued: 2, after: "2-0", want: []string{"1-0#1", "2-0#1"}, woke: true},
		{name: "only ids at or below received: nothing", state: []step{push("1-0", "2-0", "3-0")}, event: reread("1-0", "2-0", "3-0"), after: "3-0", want: []string{"1-0#1", "2-0#1", "3-0#1"}},
		{name: "only ids below received, in flight: nothing", state: []step{push("1-0", "2-0", "3-0"), pop(3)}, event: reread("1-0", "2-0"), after: "3-0"},
		{name: "ids below and above received: those above", state: []step{push("1-0", "2-0"), pop(2)}, event: reread("1-0", "2-0", "3-0"), queued: 1, after: "3-0", want: []string{"3-0#1"}, woke: true},
		{name: "deleted entries are handed back, not delivered", state: []step{push("1-0")}, event: reread("2-0!", "3-0", "4-0!"), queued: 1, deleted: []string{"2-0", "4-0"}, after: "4-0", want: []string{"1-0#1", "3-0#1"}, woke: true},
		{name: "only deleted entries: received moves past them", state: []step{push("1-0"), pop(1)}, event: reread("2-0!", "3-0!"), deleted: []string{"2-0", "3-0"}, after: "3-0"},
		{name: "the next re-read starts past the deleted ones", state: []step{reread("1-0!")}, event: reread("1-0!", "2-0"), queued: 1, after: "2-0", want: []string{"2-0#1"}, woke: true},
		{name: "deleted at or below received: not handed back", state: []step{push("1-0", "2-0", "3-0"), pop(3)}, event: reread("2-0!", "3-0"), after: "3-0"},
		{name: "an empty re-read changes nothing", state: []step{push("1-0")}, event: reread(), after: "1-0", want: []string{"1-0#1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			if h.queued != tt.queued || !slices.Equal(h.deleted, tt.deleted) {
				t.Fatalf("Recover = %d, %v; want %d, %v", h.queued, h.deleted, tt.queued, tt.deleted)
			}
			if h.woke != tt.woke {
				t.Fatalf("Wake signalled = %v, want %v", h.woke, tt.woke)
			}
			if _, after, _ := h.p.ReadFrom(); after != tt.after {
				t.Fatalf("ReadFrom after = %q, want %q", after, tt.after)
			}
			if got := h.delivered(); !slices.Equal(got, tt.want) {
				t.Fatalf("delivered %v, want %v", got, tt.want)
			}
		})
	}
}

// Rule: the queue asks for more when it falls to the low-water mark (batch/2 = 5), so
// prefetch stays within 1.5 batches; an empty queue always asks.
func TestRefill(t *testing.T) {
	f, tr := false, true
	tests := []struct {
		name    string
		state   []step
		event   step
		refills []bool // Pop's refill, one per call
		want    bool   // ReadFrom's want
		queued  int
	}{
		{name: "a new position asks once its first Pop finds nothing", event: nothing(), want: false},
		{name: "pop on an empty queue asks", event: pop(1), refills: []bool{tr}, want: true},
		{name: "pop on an emptied queue asks again", state: []step{push(seq(1, 10)...), pop(10)}, event: pop(1), refills: []bool{tr}, want: true},
		{name: "a full batch does not ask", event: push(seq(1, 10)...), want: false, queued: 10},
		{name: "six queued do not ask", event: push(seq(1, 6)...), want: false, queued: 6},
		{name: "half a batch asks", event: push(seq(1, 5)...), want: true, queued: 5},
		{name: "a pop above low water does not ask", state: []step{push(seq(1, 10)...)}, event: pop(1), refills: []bool{f}, want: false, queued: 9},
		{name: "falling to 5 asks, once", state: []step{push(seq(1, 10)...)}, event: pop(7), refills: []bool{f, f, f, f, tr, f, f}, want: true, queued: 3},
		{name: "pops below low water after a short push do not ask again", state: []step{push(seq(1, 3)...)}, event: pop(3), refills: []bool{f, f, f}, want: true},
		{name: "the next batch stops asking: at most 1.5 batches", state: []step{push(seq(1, 10)...), pop(5)}, event: push(seq(11, 20)...), want: false, queued: 15},
		{name: "it asks again at low water after a refill", state: []step{push(seq(1, 10)...), pop(5), push(seq(11, 20)...)}, event: pop(10), refills: []bool{f, f, f, f, f, f, f, f, f, tr}, want: true, queued: 5},
		{name: "a re-read below low water asks", event: reread("1-0", "2-0"), want: true, queued: 2},
		{name: "a push of held ids only asks at low water", state: []step{push(seq(1, 10)...), pop(6)}, event: push(seq(1, 10)...), want: true, queued: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			if !slices.Equal(h.refills, tt.refills) {
				t.Fatalf("Pop refill = %v, want %v", h.refills, tt.refills)
			}
			if want, _, _ := h.p.ReadFrom(); want != tt.want {
				t.Fatalf("ReadFrom want = %v, want %v", want, tt.want)
			}
			if q := h.p.Queued(); q != tt.queued {
				t.Fatalf("Queued = %d, want %d", q, tt.queued)
			}
		})
	}
}

// claimedLeft is the number of claimed strays whose delivery counts are still kept.
func claimedLeft(p *Position) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.claimed)
}

// Rule: strays are claimed before anything else is taken (RequestStrays wakes the run
// loop, TakeStrays reports it once); they are queued by the next re-read, with the
// delivery counts the claim reported, not by the claim; the counts are dropped once
// received passes them.
func TestStrays(t *testing.T) {
	c := func(kv ...any) map[string]int64 {
		m := map[string]int64{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = int64(kv[i+1].(int))
		}
		return m
	}
	tests := []struct {
		name         string
		state        []step
		event        step
		woke, strays bool
		want         []string // delivered from the event on
		left         int      // claimed counts still kept
	}{
		{name: "a request wakes and is taken", event: requestStrays(), woke: true, strays: true},
		{name: "no request, nothing to take", event: nothing()},
		{name: "two requests are taken once", state: []step{requestStrays()}, event: requestStrays(), woke: true, strays: true},
		{name: "a taken request is cleared", state: []step{requestStrays(), takeStrays()}, event: nothing()},
		{name: "a request outlives pushes and pops", state: []step{requestStrays(), push("1-0", "2-0"), pop(1)}, event: push("3-0"), woke: true, strays: true, want: []string{"2-0#1", "3-0#1"}},
		{name: "a claim queues nothing", state: []step{push("1-0")}, event: claimed(c("2-0", 3, "3-0", 2)), want: []string{"1-0#1"}, left: 2},
		{name: "the next re-read queues them with the claim's counts", state: []step{push("1-0"), claimed(c("2-0", 3, "3-0", 2))}, event: reread("2-0", "3-0"), woke: true, want: []string{"1-0#1", "2-0#3", "3-0#2"}},
		{name: "an own lost entry still comes first", state: []step{push("1-0"), pop(1), claimed(c("3-0", 3, "4-0", 2))}, event: reread("2-0", "3-0", "4-0"), woke: true, want: []string{"2-0#1", "3-0#3", "4-0#2"}},
		{name: "counts are kept until a re-read reaches them", state: []step{push("1-0"), claimed(c("3-0", 4)), reread("2-0")}, event: reread("3-0"), woke: true, want: []string{"1-0#1", "2-0#1", "3-0#4"}},
		{name: "a re-read short of them keeps the counts", state: []step{push("1-0"), claimed(c("3-0", 4))}, event: reread("2-0"), woke: true, want: []string{"1-0#1", "2-0#1"}, left: 1},
		{name: "a deleted stray's count is dropped", state: []step{claimed(c("2-0", 3, "3-0", 5))}, event: reread("2-0!", "3-0"), woke: true, want: []string{"3-0#5"}},
		{name: "counts at or below received are dropped by the next re-read", state: []step{push("5-0"), claimed(c("2-0", 3))}, event: reread("2-0"), want: []string{"5-0#1"}},
		{name: "a claim of no entries records nothing", event: claimed(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			if h.woke != tt.woke {
				t.Fatalf("Wake signalled = %v, want %v", h.woke, tt.woke)
			}
			if s := h.p.TakeStrays(); s != tt.strays || h.p.TakeStrays() {
				t.Fatalf("TakeStrays = %v (then again true?), want %v once", s, tt.strays)
			}
			if got := h.delivered(); !slices.Equal(got, tt.want) {
				t.Fatalf("delivered %v, want %v", got, tt.want)
			}
			if left := claimedLeft(h.p); left != tt.left {
				t.Fatalf("claimed counts kept for %d ids, want %d", left, tt.left)
			}
		})
	}
}

// Rule: a read round sent before or while a stray claim runs is not applied: the claim
// generation is odd while a claim runs and changes at both ends. Each row's round starts
// at readGen.
func TestClaimedSince(t *testing.T) {
	tests := []struct {
		name  string
		state []step
		event step
		want  bool // ClaimedSince(the round's gen)
	}{
		{name: "no claim", state: []step{readGen()}, event: nothing(), want: false},
		{name: "no claim, entries pushed, popped, re-read, acked", state: []step{readGen(), push("1-0"), pop(1), reread("2-0"), forget("1-0")}, event: requestStrays(), want: false},
		{name: "claimed counts alone are no claim", state: []step{readGen()}, event: claimed(map[string]int64{"1-0": 2}), want: false},
		{name: "round sent before a claim that runs", state: []step{readGen()}, event: claimRuns(), want: true},
		{name: "round sent before a claim that ended", state: []step{readGen()}, event: claim(), want: true},
		{name: "round sent while a claim runs", state: []step{claimRuns(), readGen()}, event: nothing(), want: true},
		{name: "round sent while a claim ran, which ended", state: []step{claimRuns(), readGen()}, event: claimEnds(), want: true},
		{name: "round sent after a claim ended", state: []step{claim(), readGen()}, event: nothing(), want: false},
		{name: "round sent after two claims", state: []step{claim(), claim(), readGen()}, event: push("1-0"), want: false},
		{name: "round sent after a claim, before the next", state: []step{claim(), readGen()}, event: claimRuns(), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, tt.state, tt.event)
			if got := h.p.ClaimedSince(h.gen); got != tt.want {
				t.Fatalf("ClaimedSince(%d) = %v, want %v", h.gen, got, tt.want)
			}
		})
	}
}

// held is the test's view of the ids popped and not yet acked.
type held struct {
	mu  sync.Mutex
	ids map[string]bool
}

// take records a pop of id; false when id was already popped and not acked.
func (h *held) take(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids[id] {
		return false
	}
	h.ids[id] = true
	return true
}

// ack releases id: first from the test's view, then from p, so a pop after the Forget
// never finds it still marked.
func (h *held) ack(p *Position, id string) {
	h.mu.Lock()
	delete(h.ids, id)
	h.mu.Unlock()
	p.Forget([]stream.Acked{{ID: id}})
}

// randomIDs is an ascending run of ids from a small space, some deleted ("!") when gone.
func randomIDs(r *rand.Rand, gone bool) []string {
	from := 1 + r.IntN(40)
	ids := seq(from, from+r.IntN(8))
	for i := range ids {
		if gone && r.IntN(4) == 0 {
			ids[i] += "!"
		}
	}
	return ids
}

// feed pushes, re-reads and claims on p from one goroutine.
func feed(p *Position, seed uint64, rounds int) {
	r := rand.New(rand.NewPCG(seed, 1))
	for range rounds {
		switch r.IntN(4) {
		case 0:
			p.Recover(entries(randomIDs(r, true)...))
		case 1:
			end := p.BeginClaim()
			p.Claimed(map[string]int64{strconv.Itoa(1+r.IntN(50)) + "-0": 2})
			end()
		default:
			p.Push(entries(randomIDs(r, false)...), nil)
		}
		p.RequestStrays()
	}
}

// drainHeld pops from p, checks each id against h, and acks some of them at once.
func drainHeld(t *testing.T, p *Position, h *held, seed uint64, rounds int) {
	r := rand.New(rand.NewPCG(seed, 2))
	var mine []string
	for range rounds {
		p.TakeStrays()
		if e, ok, _ := p.Pop(); ok {
			if !h.take(e.ID) {
				t.Errorf("%s popped twice while held", e.ID)
			}
			mine = append(mine, e.ID)
		}
		if len(mine) > 0 && r.IntN(2) == 0 {
			i := r.IntN(len(mine))
			h.ack(p, mine[i])
			mine = slices.Delete(mine, i, i+1)
		}
	}
}

// watchReceived checks from one goroutine that ReadFrom's after never goes back.
func watchReceived(t *testing.T, p *Position, stop <-chan struct{}) {
	last := "0-0"
	for {
		select {
		case <-stop:
			return
		default:
		}
		_, after, gen := p.ReadFrom()
		p.ClaimedSince(gen)
		if streamid.Less(after, last) {
			t.Errorf("received went back from %s to %s", last, after)
		}
		last = after
	}
}

// TestConcurrentUse: pushes, re-reads, claims, pops and acks from several goroutines at
// once (run with -race) never pop an id twice while it is held.
func TestConcurrentUse(t *testing.T) {
	p := New(batch)
	h := &held{ids: map[string]bool{}}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() { watchReceived(t, p, stop); close(watched) }()
	var wg sync.WaitGroup
	for g := range uint64(4) {
		wg.Add(2)
		go func() { defer wg.Done(); feed(p, g, 2000) }()
		go func() { defer wg.Done(); drainHeld(t, p, h, g, 4000) }()
	}
	wg.Wait()
	close(stop)
	<-watched
	for {
		e, ok, _ := p.Pop()
		if !ok {
			break
		}
		if !h.take(e.ID) {
			t.Errorf("%s left queued while popped and held", e.ID)
		}
	}
}

// TestFrontier: an ack batch's frontier is its highest id below every id still held, so
// acks that complete out of order never move the frontier past an entry not acked.
func TestFrontier(t *testing.T) {
	acked := func(ids ...string) []stream.Acked {
		out := make([]stream.Acked, len(ids))
		for i, id := range ids {
			out[i] = stream.Acked{ID: id}
		}
		return out
	}
	tests := []struct {
		name   string
		held   []string // pushed (and popped or not): held until forgotten
		gone   []string // acked by earlier batches (forgotten)
		batch  []string
		want   string
		reason string
	}{
		{name: "in order", held: seq(1, 5), batch: []string{"1-0", "2-0"}, want: "2-0", reason: "3-0 is still held"},
		{name: "everything acked", held: seq(1, 3), batch: seq(1, 3), want: "3-0"},
		{name: "a gap", held: seq(1, 5), batch: []string{"1-0", "3-0", "4-0"}, want: "1-0", reason: "2-0 is not acked"},
		{name: "the lowest not acked", held: seq(1, 5), batch: []string{"2-0", "3-0"}, want: "", reason: "1-0 is not acked"},
		{name: "the gap filled later", held: seq(1, 5), gone: []string{"1-0", "3-0"}, batch: []string{"2-0", "4-0"}, want: "4-0"},
		{name: "ids compared as stream ids", held: []string{"9-0", "10-0", "11-0"}, batch: []string{"9-0", "10-0"}, want: "10-0"},
		{name: "an id never held", held: []string{"5-0"}, batch: []string{"3-0"}, want: "3-0", reason: "a skipped entry below every held one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(batch)
			p.Push(entries(tt.held...), nil)
			p.Forget(acked(tt.gone...))
			if got := p.Frontier(acked(tt.batch...)); got != tt.want {
				t.Fatalf("Frontier = %q, want %q (%s)", got, tt.want, tt.reason)
			}
		})
	}
}
