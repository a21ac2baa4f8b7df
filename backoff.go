package streamq

import "time"

// backoff doubles a wait from min to max (from 10 ms when min is 0): how long a loop waits
// after each failed try before the next, so a Redis outage is no hot loop.
type backoff struct{ min, max, cur time.Duration }

func newBackoff(lo, hi time.Duration) *backoff { return &backoff{min: lo, max: hi, cur: lo} }

func (b *backoff) peek() time.Duration { return b.cur }

func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(max(2*b.cur, 10*time.Millisecond), b.max)
	return d
}

func (b *backoff) reset() { b.cur = b.min }
