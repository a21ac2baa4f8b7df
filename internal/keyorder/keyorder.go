// Package keyorder holds back the messages of a key while an earlier message of that key is
// with a handler or waits for its retry, so that a partition can run several handlers at
// once and still handle each key's messages one after another, in stream order. It does no
// I/O: the delivery loop admits entries as it takes them from the read position, and each
// handler reports when its message was settled.
//
// The rules, each with a row in keyorder_test.go:
//   - A message without a key is independent: it goes at once.
//   - A message of an idle key goes at once and makes the key busy; one of a busy key waits,
//     behind the earlier waiting ones of its key.
//   - When the message with a handler is settled, the next waiting one of its key goes
//     (to the same handler); with none waiting the key is idle again.
//   - A message settled by a retry keeps its key busy until the retry comes back: the retry
//     (a later entry naming the message as its original) goes at once, ahead of the
//     messages waiting behind it, also when it was read before its original was settled,
//     and the key is released or waits again when it settles.
package keyorder

import (
	"slices"
	"sync"
)

// Order is the per-key order of one partition's deliveries. T is what waits (an entry). Its
// methods are safe for concurrent use.
type Order[T any] struct {
	mu    sync.Mutex
	keys  map[string]*key[T]
	held  int
	freed chan struct{} // cap 1: a waiting message went or a key was released
}

type key[T any] struct {
	waiting []waiting[T]
	retryOf string // the original id of the retry the key waits for; "" when none
}

type waiting[T any] struct {
	t       T
	retryOf string
}

// New returns an empty Order.
func New[T any]() *Order[T] {
	return &Order[T]{keys: map[string]*key[T]{}, freed: make(chan struct{}, 1)}
}

// Admit reports whether t, a message of key k, goes now. retryOf is the original id when t
// is a retry of this group's (else ""). false: t waits until Done hands it over.
func (o *Order[T]) Admit(k string, t T, retryOf string) bool {
	if k == "" {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.keys[k]
	switch {
	case st == nil:
		o.keys[k] = &key[T]{}
		return true
	case st.retryOf != "" && retryOf == st.retryOf:
		st.retryOf = ""
		return true
	default:
		st.waiting = append(st.waiting, waiting[T]{t: t, retryOf: retryOf})
		o.held++
		return false
	}
}

// Done records that the message of key k a handler had was settled. retriedAs is its
// original id when it was settled by a retry: the key then waits for that retry (which may
// have arrived already: it then goes first). It returns the next message of k to hand to
// the same handler, if any.
func (o *Order[T]) Done(k, retriedAs string) (next T, ok bool) {
	if k == "" {
		return next, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	st := o.keys[k]
	if st == nil {
		return next, false
	}
	i := 0 // the waiting message to hand over
	if retriedAs != "" {
		i = slices.IndexFunc(st.waiting, func(w waiting[T]) bool { return w.retryOf == retriedAs })
		if i < 0 {
			st.retryOf = retriedAs
			return next, false
		}
	}
	if len(st.waiting) == 0 {
		delete(o.keys, k)
		o.signal()
		return next, false
	}
	next = st.waiting[i].t
	st.waiting = slices.Delete(st.waiting, i, i+1)
	o.held--
	o.signal()
	return next, true
}

// Held is the number of messages waiting behind their key.
func (o *Order[T]) Held() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held
}

// Freed is signalled when a waiting message went or a key was released.
func (o *Order[T]) Freed() <-chan struct{} { return o.freed }

func (o *Order[T]) signal() {
	select {
	case o.freed <- struct{}{}:
	default:
	}
}
