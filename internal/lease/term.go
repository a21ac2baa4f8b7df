package lease

import (
	"sync"
	"time"

	"github.com/streamq-dev/streamq/internal/clock"
)

// Term is how long a held lease is known to live: at least TTL from the sending of the last
// request that acquired or renewed it. A member must stop using a partition whose term may
// have ended, since Redis may have expired the lease and another member taken it. Term does
// no I/O: the renewer reports renewals, the users ask before they act.
type Term struct {
	ttl   time.Duration
	clock clock.Clock
	outer *Term // a term this one cannot outlive (a static member's presence), or nil

	mu   sync.Mutex
	sent time.Time // request time of the last successful acquisition or renewal
}

// NewTerm returns the term of a lease acquired by a request sent at acquired.
func NewTerm(c clock.Clock, ttl time.Duration, acquired time.Time) *Term {
	return &Term{ttl: ttl, clock: c, sent: acquired}
}

// Within bounds t by outer: t may have expired once outer may have (a static member's
// partitions end with its presence in the group). It returns t; a nil outer bounds nothing.
func (t *Term) Within(outer *Term) *Term {
	t.outer = outer
	return t
}

// Renewed records a successful renewal whose request was sent at sent.
func (t *Term) Renewed(sent time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sent.After(t.sent) {
		t.sent = sent
	}
}

// Expired reports whether the lease may have expired in Redis.
func (t *Term) Expired() bool { return t.ExpiresWithin(0) }

// ExpiresWithin reports whether the lease may expire in Redis within d.
func (t *Term) ExpiresWithin(d time.Duration) bool {
	t.mu.Lock()
	sent := t.sent
	t.mu.Unlock()
	return clock.Since(t.clock, sent)+d >= t.ttl || t.outer != nil && t.outer.ExpiresWithin(d)
}
