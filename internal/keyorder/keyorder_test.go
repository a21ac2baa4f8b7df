package keyorder

import (
	"slices"
	"testing"
)

// step is one event: admit (key, id, retryOf) or done (key, retriedAs).
type step struct {
	admit            bool
	key, id, retryOf string
	retriedAs        string
	wantGo           bool   // admit: goes at once
	wantNext         string // done: the next message handed over ("" none)
}

func admit(k, id string, goes bool) step { return step{admit: true, key: k, id: id, wantGo: goes} }
func admitRetry(k, id, of string, goes bool) step {
	return step{admit: true, key: k, id: id, retryOf: of, wantGo: goes}
}
func done(k, next string) step        { return step{key: k, wantNext: next} }
func retried(k, as, next string) step { return step{key: k, retriedAs: as, wantNext: next} }

func TestOrder(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"no key: independent", []step{admit("", "1", true), admit("", "2", true), done("", "")}},
		{"idle keys go at once", []step{admit("a", "1", true), admit("b", "2", true)}},
		{"a busy key waits, in order", []step{
			admit("a", "1", true), admit("a", "2", false), admit("b", "3", true), admit("a", "4", false),
			done("a", "2"), done("a", "4"), done("a", ""), admit("a", "5", true)}},
		{"a retry keeps its key busy and goes first", []step{
			admit("a", "1", true), admit("a", "2", false), retried("a", "1", ""),
			admit("a", "3", false), admitRetry("a", "9", "1", true), done("a", "2"), done("a", "3"), done("a", "")}},
		{"a retry retried again", []step{
			admit("a", "1", true), admit("a", "2", false), retried("a", "1", ""),
			admitRetry("a", "8", "1", true), retried("a", "1", ""), admitRetry("a", "9", "1", true), done("a", "2"), done("a", "")}},
		{"another message naming another original waits", []step{
			admit("a", "1", true), retried("a", "1", ""), admitRetry("a", "7", "6", false), admitRetry("a", "9", "1", true),
			done("a", "7"), done("a", "")}},
		{"a retry read before its original was settled goes first", []step{
			admit("a", "1", true), admit("a", "2", false), admitRetry("a", "9", "1", false), retried("a", "1", "9"),
			done("a", "2"), done("a", "")}},
		{"other keys flow while one waits for its retry", []step{
			admit("a", "1", true), retried("a", "1", ""), admit("b", "2", true), done("b", ""), admit("b", "3", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := New[string]()
			for i, s := range tt.steps {
				if s.admit {
					if got := o.Admit(s.key, s.id, s.retryOf); got != s.wantGo {
						t.Fatalf("step %d: Admit(%q, %q) = %v, want %v", i, s.key, s.id, got, s.wantGo)
					}
					continue
				}
				next, ok := o.Done(s.key, s.retriedAs)
				if got := map[bool]string{true: next, false: ""}[ok]; got != s.wantNext {
					t.Fatalf("step %d: Done(%q) handed over %q, want %q", i, s.key, got, s.wantNext)
				}
			}
		})
	}
}

// TestOrderHeldAndFreed: Held counts the waiting messages; Freed is signalled when one goes.
func TestOrderHeldAndFreed(t *testing.T) {
	o := New[string]()
	o.Admit("a", "1", "")
	o.Admit("a", "2", "")
	o.Admit("a", "3", "")
	if o.Held() != 2 {
		t.Fatalf("Held = %d, want 2", o.Held())
	}
	o.Done("a", "")
	select {
	case <-o.Freed():
	default:
		t.Fatal("Freed not signalled")
	}
	var got []string
	for next, ok := o.Done("a", ""); ok; next, ok = o.Done("a", "") {
		got = append(got, next)
	}
	if !slices.Equal(got, []string{"3"}) || o.Held() != 0 {
		t.Fatalf("handed over %v, held %d", got, o.Held())
	}
}
