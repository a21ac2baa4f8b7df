package lease

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/streamq-dev/streamq/internal/member"
)

// TestBudget: MaxLeasedPartitions over a Subscriber's subscriptions. Each step reserves
// or releases a slot for subscription a or b; want is both capacities after it.
func TestBudget(t *testing.T) {
	t.Parallel()
	type step struct {
		sub     string // "a" or "b"
		reserve bool   // else release
		ok      bool   // what reserve returned
	}
	tests := []struct {
		name  string
		max   int
		steps []step
		want  [2]int // capacity of a, of b
	}{
		{name: "no cap", max: 0, steps: []step{{"a", true, true}, {"a", true, true}}, want: [2]int{0, 0}},
		{name: "nothing held", max: 3, want: [2]int{3, 3}},
		{name: "a holds one", max: 3, steps: []step{{"a", true, true}}, want: [2]int{3, 2}},
		{name: "a holds the cap", max: 2, steps: []step{{"a", true, true}, {"a", true, true}, {"b", true, false}},
			want: [2]int{2, member.NoLeases}},
		{name: "a gives one back", max: 2, steps: []step{{"a", true, true}, {"a", true, true}, {"a", false, true}, {"b", true, true}},
			want: [2]int{1, 1}},
		{name: "shared", max: 3, steps: []step{{"a", true, true}, {"b", true, true}, {"b", true, true}, {"a", true, false}},
			want: [2]int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.max)
			subs := map[string]*int{"a": new(int), "b": new(int)}
			for i, s := range tt.steps {
				share := b.Share(subs[s.sub])
				if s.reserve {
					assert.Equal(t, s.ok, share.Reserve(), "step %d", i)
				} else {
					share.Release()
				}
			}
			assert.Equal(t, tt.want, [2]int{b.Share(subs["a"]).Capacity(), b.Share(subs["b"]).Capacity()})
		})
	}
}
