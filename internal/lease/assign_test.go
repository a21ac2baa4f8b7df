package lease

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/member"
)

// plain returns members without filters or caps, sorted by name as Heartbeat returns them.
func plain(names ...string) []member.Member {
	ms := make([]member.Member, len(names))
	for i, n := range names {
		ms[i] = member.Member{Name: n}
	}
	sortMembers(ms)
	return ms
}

func sortMembers(ms []member.Member) {
	sort.Slice(ms, func(a, b int) bool { return ms[a].Name < ms[b].Name })
}

// ownedCounts counts the partitions of every member, 0 for members that own none.
func ownedCounts(owners []string, members []member.Member) map[string]int {
	c := make(map[string]int, len(members))
	for _, m := range members {
		c[m.Name] = 0
	}
	for _, o := range owners {
		if o != "" {
			c[o]++
		}
	}
	return c
}

func spread(counts map[string]int) int {
	lo, hi := -1, 0
	for _, c := range counts {
		if lo < 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	return hi - lo
}

// moved counts the partitions whose owner differs between two assignments.
func moved(before, after []string) int {
	n := 0
	for p := range after {
		if p >= len(before) || before[p] != after[p] {
			n++
		}
	}
	return n
}

// randomNames returns k distinct random names, sorted.
func randomNames(r *rand.Rand, k int) []string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	seen := map[string]bool{}
	out := make([]string, 0, k)
	for len(out) < k {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		if s := b.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// assertValid checks the invariants every assignment keeps: one slot per partition, owners
// are members, every owner is eligible for its partition and under its cap.
func assertValid(t *testing.T, n int, members []member.Member, owners []string) {
	t.Helper()
	require.Len(t, owners, n)
	byName := map[string]member.Member{}
	for _, m := range members {
		byName[m.Name] = m
	}
	for p, o := range owners {
		if o == "" {
			continue
		}
		m, ok := byName[o]
		require.True(t, ok, "partition %d given to non-member %q", p, o)
		assert.True(t, m.Eligible(p), "partition %d given to %+v, which is not eligible", p, m)
	}
	for name, c := range ownedCounts(owners, members) {
		if m := byName[name]; m.MaxLeased > 0 {
			assert.LessOrEqual(t, c, m.MaxLeased, "%s over its MaxLeased", name)
		} else if m.MaxLeased == member.NoLeases {
			assert.Zero(t, c, "%s leases nothing (member.NoLeases)", name)
		}
	}
}

func TestAssignBalancedFromScratch(t *testing.T) {
	type input struct {
		n       int
		members []member.Member
	}
	tests := []struct {
		name  string
		input input
		want  map[string]int // exact counts; nil: only check max-min <= 1
	}{
		{name: "3 members 12 partitions", input: input{12, plain("a", "b", "c")}, want: map[string]int{"a": 4, "b": 4, "c": 4}},
		{name: "5 members 8 partitions", input: input{8, plain("m1", "m2", "m3", "m4", "m5")}},
		{name: "4 members 4 partitions", input: input{4, plain("a", "b", "c", "d")}, want: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}},
		{name: "more members than partitions", input: input{3, plain("a", "b", "c", "d", "e", "f", "g")}},
		{name: "one member", input: input{5, plain("solo")}, want: map[string]int{"solo": 5}},
		{name: "7 members 64 partitions", input: input{64, plain("a", "b", "c", "d", "e", "f", "g")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := Assign(tt.input.n, tt.input.members, nil)
			assertValid(t, tt.input.n, tt.input.members, owners)
			assert.NotContains(t, owners, "", "every partition is assigned")
			counts := ownedCounts(owners, tt.input.members)
			assert.LessOrEqual(t, spread(counts), 1, "counts %v", counts)
			if tt.want != nil {
				assert.Equal(t, tt.want, counts)
			}
		})
	}
}

func TestAssignRebalancesSkewedCurrent(t *testing.T) {
	members := plain("a", "b", "c", "d", "e")
	tests := []struct {
		name  string
		input []string // current
		want  int      // max partitions moved
	}{
		{name: "one member holds everything", input: slices.Repeat([]string{"a"}, 8), want: 6},
		{name: "stale owner not a member", input: slices.Repeat([]string{"gone"}, 8), want: 8},
		{name: "half free", input: []string{"a", "a", "a", "a", "", "", "", ""}, want: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := Assign(8, members, tt.input)
			assertValid(t, 8, members, owners)
			assert.NotContains(t, owners, "")
			assert.LessOrEqual(t, spread(ownedCounts(owners, members)), 1)
			assert.LessOrEqual(t, moved(tt.input, owners), tt.want)
		})
	}
}

// TestAssignJoinIsSticky: a fourth member joining a balanced 3-member group of 12 partitions
// takes its 3 partitions, one from each; nobody else moves.
func TestAssignJoinIsSticky(t *testing.T) {
	r := rand.New(rand.NewPCG(20240601, 7))
	histogram := map[int]int{}
	for range 500 {
		names := randomNames(r, 4)
		joiner := names[r.IntN(4)]
		var before []member.Member
		for _, n := range names {
			if n != joiner {
				before = append(before, member.Member{Name: n})
			}
		}
		after := plain(names...)

		prev := Assign(12, before, nil)
		require.Equal(t, []int{4, 4, 4}, sortedCounts(ownedCounts(prev, before)), "names %v", names)
		next := Assign(12, after, prev)
		assertValid(t, 12, after, next)
		require.Equal(t, []int{3, 3, 3, 3}, sortedCounts(ownedCounts(next, after)), "names %v", names)
		m := moved(prev, next)
		histogram[m]++
		require.LessOrEqual(t, m, 4, "names %v joiner %q: %v -> %v", names, joiner, prev, next)
		for p := range next {
			if next[p] != prev[p] {
				assert.Equal(t, joiner, next[p], "partition %d moved between old members", p)
			}
		}
	}
	t.Logf("partitions moved by a join (moves: runs): %v", histogram)
}

// TestAssignLeaveMovesOnlyTheLeaversPartitions: the partitions of a member that left go to
// the others; the others keep theirs.
func TestAssignLeaveMovesOnlyTheLeaversPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(99, 1))
	for range 200 {
		names := randomNames(r, 4)
		full := plain(names...)
		prev := Assign(12, full, nil)
		leaver := names[r.IntN(4)]
		rest := slices.DeleteFunc(slices.Clone(full), func(m member.Member) bool { return m.Name == leaver })
		next := Assign(12, rest, prev)
		assertValid(t, 12, rest, next)
		assert.Equal(t, []int{4, 4, 4}, sortedCounts(ownedCounts(next, rest)))
		for p := range next {
			if prev[p] != leaver {
				assert.Equal(t, prev[p], next[p], "partition %d of a staying member moved", p)
			}
		}
	}
}

func sortedCounts(c map[string]int) []int {
	out := make([]int, 0, len(c))
	for _, v := range c {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}

func TestAssignMaxLeased(t *testing.T) {
	type input struct {
		n       int
		members []member.Member
	}
	tests := []struct {
		name  string
		input input
		want  map[string]int // counts; "" counts unassigned partitions
	}{
		{
			name:  "cap 1 each, 4 partitions, 2 members",
			input: input{4, []member.Member{{Name: "a", MaxLeased: 1}, {Name: "b", MaxLeased: 1}}},
			want:  map[string]int{"a": 1, "b": 1, "": 2},
		},
		{
			name:  "capped member, the rest goes to the uncapped one",
			input: input{6, []member.Member{{Name: "a", MaxLeased: 1}, {Name: "b"}}},
			want:  map[string]int{"a": 1, "b": 5, "": 0},
		},
		{
			name:  "cap above fair share changes nothing",
			input: input{6, []member.Member{{Name: "a", MaxLeased: 10}, {Name: "b", MaxLeased: 10}}},
			want:  map[string]int{"a": 3, "b": 3, "": 0},
		},
		{
			name:  "a full member (member.NoLeases) gets nothing, the other everything",
			input: input{4, []member.Member{{Name: "a", MaxLeased: member.NoLeases}, {Name: "b"}}},
			want:  map[string]int{"a": 0, "b": 4, "": 0},
		},
		{
			name:  "full members only: nothing is assigned",
			input: input{3, []member.Member{{Name: "a", MaxLeased: member.NoLeases}, {Name: "b", MaxLeased: member.NoLeases}}},
			want:  map[string]int{"a": 0, "b": 0, "": 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := Assign(tt.input.n, tt.input.members, nil)
			assertValid(t, tt.input.n, tt.input.members, owners)
			got := ownedCounts(owners, tt.input.members)
			got[""] = len(Owned(owners, ""))
			assert.Equal(t, tt.want, got, "owners %v", owners)
		})
	}
}

// TestAssignFullMemberGivesUpWhatItHolds: a member whose cap became member.NoLeases (its
// Subscriber's MaxLeasedPartitions are held on other topics) keeps nothing it holds.
func TestAssignFullMemberGivesUpWhatItHolds(t *testing.T) {
	members := []member.Member{{Name: "a", MaxLeased: member.NoLeases}, {Name: "b"}}
	owners := Assign(4, members, []string{"a", "a", "b", ""})
	assertValid(t, 4, members, owners)
	assert.Equal(t, []string{"b", "b", "b", "b"}, owners)
}

func TestAssignFilters(t *testing.T) {
	type input struct {
		n       int
		members []member.Member
	}
	type want struct {
		owned      map[string][]int // exact partitions; nil entries not checked
		only       map[string][]int // owned partitions must be a subset
		unassigned []int
	}
	tests := []struct {
		name  string
		input input
		want  want
	}{
		{
			name:  "odd-only member gets only odd partitions",
			input: input{4, []member.Member{{Name: "a", Modulo: 2, Remainder: 1}, {Name: "b"}}},
			want:  want{only: map[string][]int{"a": {1, 3}}},
		},
		{
			name:  "complementary filters",
			input: input{6, []member.Member{{Name: "even", Modulo: 2, Remainder: 0}, {Name: "odd", Modulo: 2, Remainder: 1}}},
			want:  want{owned: map[string][]int{"even": {0, 2, 4}, "odd": {1, 3, 5}}},
		},
		{
			name:  "leftovers of a narrow filter go to the eligible member",
			input: input{8, []member.Member{{Name: "a", Modulo: 4, Remainder: 0}, {Name: "b"}}},
			want:  want{only: map[string][]int{"a": {0, 4}}},
		},
		{
			name:  "partitions nobody may take stay unassigned",
			input: input{4, []member.Member{{Name: "a", Modulo: 2, Remainder: 0}, {Name: "b", Modulo: 2, Remainder: 0}}},
			want:  want{only: map[string][]int{"a": {0, 2}, "b": {0, 2}}, unassigned: []int{1, 3}},
		},
		{
			name:  "filter and cap together",
			input: input{6, []member.Member{{Name: "a", Modulo: 3, Remainder: 2, MaxLeased: 1}, {Name: "b"}}},
			want:  want{only: map[string][]int{"a": {2, 5}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := Assign(tt.input.n, tt.input.members, nil)
			assertValid(t, tt.input.n, tt.input.members, owners)
			for name, parts := range tt.want.owned {
				assert.Equal(t, parts, Owned(owners, name), "owners %v", owners)
			}
			for name, parts := range tt.want.only {
				assert.Subset(t, parts, Owned(owners, name), "owners %v", owners)
			}
			var free []int
			for p, o := range owners {
				if o == "" {
					free = append(free, p)
				}
			}
			assert.Equal(t, tt.want.unassigned, free, "owners %v", owners)
		})
	}
}

func TestAssignDeterministic(t *testing.T) {
	type input struct {
		n       int
		members []member.Member
		current []string
	}
	tests := []struct {
		name  string
		input input
	}{
		{name: "fresh group", input: input{12, plain("a", "b", "c"), nil}},
		{name: "join", input: input{12, plain("a", "b", "c", "d"), []string{"a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c"}}},
		{name: "caps and filters", input: input{10, []member.Member{
			{Name: "a", MaxLeased: 2}, {Name: "b", Modulo: 2, Remainder: 1}, {Name: "c"}, {Name: "d", Modulo: 3}}, []string{"c", "", "x", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Assign(tt.input.n, tt.input.members, tt.input.current)
			assert.Equal(t, want, Assign(tt.input.n, tt.input.members, tt.input.current), "same input, same output")
			// Callers pass members sorted by name; Assign does not sort them but breaks
			// every tie by name, so the order does not matter either.
			r := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				shuffled := slices.Clone(tt.input.members)
				r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				assert.Equal(t, want, Assign(tt.input.n, shuffled, tt.input.current), "members %v", shuffled)
			}
		})
	}
}

// TestAssignIsFixedPoint: feeding an assignment back as current must not move anything,
// or members would hand partitions back and forth every rebalance.
func TestAssignIsFixedPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 5000 {
		members := plain(randomNames(r, 1+r.IntN(6))...)
		n := r.IntN(20)
		current := randomCurrent(r, n, members)
		once := Assign(n, members, current)
		assert.Equal(t, once, Assign(n, members, once), "n=%d members=%v current=%v", n, members, current)
	}
}

// TestAssignIsFixedPointWithCapsAndFilters is the same property with MaxLeased and
// Modulo/Remainder: quotas are water-filled against what each member can take and leftovers
// go back to their current owner, so an assignment fed back in does not move (named cases),
// and from any random state it settles within a few rounds instead of cycling.
func TestAssignIsFixedPointWithCapsAndFilters(t *testing.T) {
	tests := []struct {
		name  string
		input []member.Member
		n     int
	}{
		{name: "one member capped at 1", input: []member.Member{{Name: "m0"}, {Name: "m1"}, {Name: "m2", MaxLeased: 1}}, n: 10},
		{name: "filtered and capped member", input: []member.Member{{Name: "m0"}, {Name: "m1"}, {Name: "m2", Modulo: 2, Remainder: 1, MaxLeased: 1}}, n: 10},
		{name: "three filtered members", input: []member.Member{
			{Name: "m0"}, {Name: "m1", Modulo: 3, Remainder: 2}, {Name: "m2", Modulo: 3, Remainder: 2},
			{Name: "m3", Modulo: 3, Remainder: 2}, {Name: "m4", Modulo: 1}}, n: 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := Assign(tt.n, tt.input, nil)
			for round := range 5 {
				next := Assign(tt.n, tt.input, owners)
				require.Equal(t, owners, next, "round %d moved partitions", round)
				owners = next
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for range 5000 {
			members := plain(randomNames(r, 1+r.IntN(6))...)
			for i := range members {
				if r.IntN(3) == 0 {
					members[i].Modulo = 1 + r.IntN(3)
					members[i].Remainder = r.IntN(members[i].Modulo)
				}
				switch r.IntN(6) {
				case 0, 1:
					members[i].MaxLeased = 1 + r.IntN(4)
				case 2: // full: its budget spent on other topics
					members[i].MaxLeased = member.NoLeases
				}
			}
			n := r.IntN(20)
			owners := randomCurrent(r, n, members)
			settled := false
			for round := 0; round < 8 && !settled; round++ {
				next := Assign(n, members, owners)
				settled = slices.Equal(next, owners)
				owners = next
			}
			require.True(t, settled, "n=%d members=%+v did not settle: %v", n, members, owners)
			assertValid(t, n, members, owners)
		}
	})
}

func randomCurrent(r *rand.Rand, n int, members []member.Member) []string {
	current := make([]string, n)
	for p := range current {
		switch r.IntN(4) {
		case 0: // free
		case 1:
			current[p] = "stale-" + fmt.Sprint(r.IntN(3))
		default:
			current[p] = members[r.IntN(len(members))].Name
		}
	}
	return current
}

func TestAssignEdgeCases(t *testing.T) {
	type input struct {
		n       int
		members []member.Member
		current []string
	}
	tests := []struct {
		name  string
		input input
		want  []string
	}{
		{name: "no members", input: input{3, nil, nil}, want: []string{"", "", ""}},
		{name: "no members, stale current", input: input{2, nil, []string{"a", "b"}}, want: []string{"", ""}},
		{name: "no partitions", input: input{0, plain("a", "b"), nil}, want: []string{}},
		{name: "no partitions, longer current", input: input{0, plain("a"), []string{"a"}}, want: []string{}},
		{name: "current longer than n is cut", input: input{2, plain("a", "b"), []string{"b", "a", "a", "a"}}, want: []string{"b", "a"}},
		{name: "current shorter than n", input: input{3, plain("a"), []string{"a"}}, want: []string{"a", "a", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Assign(tt.input.n, tt.input.members, tt.input.current))
		})
	}
}

func TestOwned(t *testing.T) {
	owners := []string{"a", "b", "", "a"}
	tests := []struct {
		name  string
		input string
		want  []int
	}{
		{name: "two partitions", input: "a", want: []int{0, 3}},
		{name: "one partition", input: "b", want: []int{1}},
		{name: "none", input: "c", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Owned(owners, tt.input))
		})
	}
}
