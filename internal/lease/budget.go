package lease

import (
	"sync"

	"github.com/streamq-dev/streamq/internal/member"
)

// Budget is MaxLeasedPartitions over every subscription of a Subscriber. A subscription
// reserves a slot before it acquires a lease and gives it back when the acquire fails or the
// partition's worker has exited, so the leases held (and being taken or handed over) never
// exceed the cap, however the subscriptions' rebalance rounds interleave. Each round a
// subscription publishes to its group the cap minus what the others hold.
type Budget struct {
	max int // 0: no cap

	mu    sync.Mutex
	total int
	held  map[any]int
}

// NewBudget returns a budget of maxLeased leases; 0: no cap.
func NewBudget(maxLeased int) *Budget {
	return &Budget{max: maxLeased, held: map[any]int{}}
}

// Share is the view of the budget of the subscription known by owner (any comparable value
// that stands for it), for its rebalancer.
func (b *Budget) Share(owner any) Share { return Share{b: b, owner: owner} }

// Share is one subscription's part of its Subscriber's Budget.
type Share struct {
	b     *Budget
	owner any
}

// Unbounded reports a Subscriber without MaxLeasedPartitions.
func (s Share) Unbounded() bool { return s.b == nil || s.b.max == 0 }

// Capacity is the cap the subscription may lease up to this round: 0 when there is no cap,
// member.NoLeases when the Subscriber's other subscriptions hold the whole cap.
func (s Share) Capacity() int {
	if s.Unbounded() {
		return 0
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if left := s.b.max - (s.b.total - s.b.held[s.owner]); left > 0 {
		return left
	}
	return member.NoLeases
}

// Reserve takes a slot for one lease; false when the cap is reached.
func (s Share) Reserve() bool {
	if s.Unbounded() {
		return true
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.b.total >= s.b.max {
		return false
	}
	s.b.total++
	s.b.held[s.owner]++
	return true
}

// Release gives back a slot taken by reserve.
func (s Share) Release() {
	if s.Unbounded() {
		return
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.total--
	if s.b.held[s.owner]--; s.b.held[s.owner] <= 0 {
		delete(s.b.held, s.owner)
	}
}
