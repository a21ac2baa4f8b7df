package run

import "time"

// Backoff doubles a wait from its least to its most (from 10 ms when the least is 0): how long
// a loop waits after each failed try before the next, so a Redis outage is no hot loop. Not
// safe for concurrent use: one loop owns it.
type Backoff struct{ min, max, cur time.Duration }

// NewBackoff returns a Backoff from lo up to hi.
func NewBackoff(lo, hi time.Duration) *Backoff { return &Backoff{min: lo, max: hi, cur: lo} }

// Peek is the wait Next would return.
func (b *Backoff) Peek() time.Duration { return b.cur }

// Next returns the wait after this failure and doubles the one after the next.
func (b *Backoff) Next() time.Duration {
	d := b.cur
	b.cur = min(max(2*b.cur, 10*time.Millisecond), b.max)
	return d
}

// Reset goes back to the least wait after a success.
func (b *Backoff) Reset() { b.cur = b.min }
