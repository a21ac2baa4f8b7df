package streamq

import (
	"sync"

	"github.com/streamq-dev/streamq/internal/lease"
)

// leaseBudget is MaxLeasedPartitions over every subscription of a Subscriber. A subscription
// reserves a slot before it acquires a lease and gives it back when the acquire fails or the
// partition's worker has exited, so the leases held (and being taken or handed over) never
// exceed the cap, however the subscriptions' rebalance rounds interleave. Each round a
// subscription publishes to its group the cap minus what the others hold.
type leaseBudget struct {
	max int // 0: no cap

	mu    sync.Mutex
	total int
	held  map[*subscription]int
}

func newLeaseBudget(maxLeased int) *leaseBudget {
	return &leaseBudget{max: maxLeased, held: map[*subscription]int{}}
}

// share is sub's view of the budget, for its rebalancer.
func (b *leaseBudget) share(sub *subscription) leaseShare { return leaseShare{b: b, sub: sub} }

// leaseShare is one subscription's part of the Subscriber's leaseBudget.
type leaseShare struct {
	b   *leaseBudget
	sub *subscription
}

func (s leaseShare) unbounded() bool { return s.b == nil || s.b.max == 0 }

// capacity is the cap the subscription may lease up to this round: 0 when there is no cap,
// lease.NoLeases when the Subscriber's other subscriptions hold the whole cap.
func (s leaseShare) capacity() int {
	if s.unbounded() {
		return 0
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if left := s.b.max - (s.b.total - s.b.held[s.sub]); left > 0 {
		return left
	}
	return lease.NoLeases
}

// reserve takes a slot for one lease; false when the cap is reached.
func (s leaseShare) reserve() bool {
	if s.unbounded() {
		return true
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.b.total >= s.b.max {
		return false
	}
	s.b.total++
	s.b.held[s.sub]++
	return true
}

// release gives back a slot taken by reserve.
func (s leaseShare) release() {
	if s.unbounded() {
		return
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.total--
	if s.b.held[s.sub]--; s.b.held[s.sub] <= 0 {
		delete(s.b.held, s.sub)
	}
}
