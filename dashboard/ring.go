package dashboard

// ring keeps the last len(buf) values pushed.
type ring[T any] struct {
	buf  []T
	next int // where the next value goes
	n    int // values held
}

func newRing[T any](size int) *ring[T] {
	return &ring[T]{buf: make([]T, max(size, 1))}
}

// push adds v, dropping the oldest value when full.
func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
}

// values returns a copy of the values, oldest first.
func (r *ring[T]) values() []T {
	out := make([]T, 0, r.n)
	start := (r.next - r.n + len(r.buf)) % len(r.buf)
	for i := range r.n {
		out = append(out, r.buf[(start+i)%len(r.buf)])
	}
	return out
}

// lastTwo returns the newest two values (ok is false when there are fewer than two).
func (r *ring[T]) lastTwo() (prev, last T, ok bool) {
	if r.n < 2 {
		return prev, last, false
	}
	at := func(back int) T { return r.buf[(r.next-back+len(r.buf))%len(r.buf)] }
	return at(2), at(1), true
}
