package lease

import (
	"testing"
	"time"

	"github.com/streamq-dev/streamq/internal/clock"
)

func TestTerm(t *testing.T) {
	const ttl = 10 * time.Second
	start := time.Unix(1_000_000, 0)
	tests := []struct {
		name    string
		renewAt []time.Duration // offsets from start of successful renewals' send times
		elapsed time.Duration   // clock advance from start
		within  time.Duration
		want    bool
	}{
		{name: "fresh lease lives", elapsed: 0, want: false},
		{name: "just before TTL lives", elapsed: ttl - time.Millisecond, want: false},
		{name: "at TTL may be expired", elapsed: ttl, want: true},
		{name: "renewal extends from its send time", renewAt: []time.Duration{5 * time.Second}, elapsed: 14 * time.Second, want: false},
		{name: "renewal send time, not reply time, counts", renewAt: []time.Duration{5 * time.Second}, elapsed: 15 * time.Second, want: true},
		{name: "an older renewal reported late does not shorten the term", renewAt: []time.Duration{8 * time.Second, 2 * time.Second}, elapsed: 17 * time.Second, want: false},
		{name: "within a read's block time", elapsed: 8 * time.Second, within: 2 * time.Second, want: true},
		{name: "within leaves room", elapsed: 7 * time.Second, within: 2 * time.Second, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewFake(start)
			term := NewTerm(c, ttl, start)
			for _, at := range tt.renewAt {
				term.Renewed(start.Add(at))
			}
			c.Advance(tt.elapsed)
			if got := term.ExpiresWithin(tt.within); got != tt.want {
				t.Fatalf("ExpiresWithin(%v) after %v = %v, want %v", tt.within, tt.elapsed, got, tt.want)
			}
			if tt.within == 0 && term.Expired() != tt.want {
				t.Fatalf("Expired disagrees with ExpiresWithin(0)")
			}
		})
	}
}

// TestTermWithin: a term bound by another one ends when either does; renewing the inner one
// does not outlive the outer one, and renewing the outer one lets the inner one live on.
func TestTermWithin(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	c := clock.NewFake(start)
	outer := NewTerm(c, 3*time.Second, start)
	inner := NewTerm(c, 10*time.Second, start).Within(outer)
	c.Advance(2 * time.Second)
	if inner.Expired() || !inner.ExpiresWithin(time.Second) {
		t.Fatal("the inner term must end with the outer one, not before")
	}
	inner.Renewed(c.Now())
	c.Advance(time.Second)
	if !inner.Expired() {
		t.Fatal("the inner term outlived the outer one")
	}
	outer.Renewed(c.Now())
	if inner.Expired() {
		t.Fatal("a renewed outer term lets the inner one live")
	}
	if NewTerm(c, time.Second, c.Now()).Within(nil).Expired() {
		t.Fatal("a nil outer term bounds nothing")
	}
}
