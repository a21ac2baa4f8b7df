package lease

import (
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/streamq-dev/streamq/internal/member"
)

// Assign maps each of n partitions to a member name ("" when no member may take it). current
// holds today's owner of each partition ("" when free or not a live member). Every member
// computes it from the same inputs and gets the same answer; small differences between
// members' snapshots are settled by the leases themselves.
//
// Quotas are fair: every member gets floor(n/k) or ceil(n/k) partitions (max - min <= 1 among
// equal members), the ceil going first to members already holding the most. Assignment is
// sticky: each member keeps what it holds up to its quota, so a join moves only the
// partitions the newcomer needs. The rest goes in rendezvous-hash order, so a fresh group
// spreads the same way every time. Partitions left over by filters or MaxLeased caps go, in
// a last pass, to any eligible member under its cap.
func Assign(n int, members []member.Member, current []string) []string {
	owners := make([]string, n)
	members = named(members)
	if n == 0 || len(members) == 0 {
		return owners
	}
	quota := quotas(n, members, current)
	count := make([]int, len(members))
	keepPass(members, current, owners, count, quota)
	pairs := rankPairs(n, members)
	for _, pr := range pairs {
		if owners[pr.partition] == "" && count[pr.member] < quota[pr.member] {
			owners[pr.partition] = members[pr.member].Name
			count[pr.member]++
		}
	}
	fillPass(pairs, members, current, owners, count)
	return owners
}

// quotas water-fills n partitions over the members: a member that can take fewer than an
// even share (MaxLeased, or fewer eligible partitions) gets what it can take, and the rest
// is shared evenly by the others, floor or ceil, the ceil going to members holding the
// most today, ties broken by name.
func quotas(n int, members []member.Member, current []string) []int {
	held, limit := heldCounts(members, current), limits(n, members)
	quota := make([]int, len(members))
	active, remaining := capped(n, limit, quota)
	if len(active) == 0 {
		return quota
	}
	sort.SliceStable(active, func(a, b int) bool {
		if held[active[a]] != held[active[b]] {
			return held[active[a]] > held[active[b]]
		}
		return members[active[a]].Name < members[active[b]].Name
	})
	for rank, i := range active {
		quota[i] = remaining / len(active)
		if rank < remaining%len(active) {
			quota[i]++
		}
	}
	return quota
}

// heldCounts is how many partitions each member holds today.
func heldCounts(members []member.Member, current []string) []int {
	held := make([]int, len(members))
	idx := make(map[string]int, len(members))
	for i, m := range members {
		idx[m.Name] = i
	}
	for _, o := range current {
		if i, ok := idx[o]; ok {
			held[i]++
		}
	}
	return held
}

// limits is how many of n partitions each member can take: those it is eligible for, at
// most MaxLeased (none for member.NoLeases).
func limits(n int, members []member.Member) []int {
	limit := make([]int, len(members))
	for i, m := range members {
		for p := 0; p < n; p++ {
			if m.Eligible(p) {
				limit[i]++
			}
		}
		switch {
		case m.MaxLeased == member.NoLeases:
			limit[i] = 0
		case m.MaxLeased > 0 && m.MaxLeased < limit[i]:
			limit[i] = m.MaxLeased
		}
	}
	return limit
}

// capped gives every member whose limit is at most an even share of what remains its
// limit in quota, repeatedly, and returns the members left to share the rest and how many
// partitions that is.
func capped(n int, limit, quota []int) (active []int, remaining int) {
	active = make([]int, 0, len(limit))
	for i := range limit {
		active = append(active, i)
	}
	remaining = n
	for changed := true; changed && len(active) > 0; {
		changed = false
		share := remaining / len(active)
		kept := active[:0]
		for _, i := range active {
			if limit[i] <= share {
				quota[i] = limit[i]
				remaining -= limit[i]
				changed = true
			} else {
				kept = append(kept, i)
			}
		}
		active = kept
	}
	return active, remaining
}

// keepPass leaves each partition with its current owner while the owner is eligible and
// under quota.
func keepPass(members []member.Member, current, owners []string, count, quota []int) {
	idx := make(map[string]int, len(members))
	for i, m := range members {
		idx[m.Name] = i
	}
	for p, o := range current {
		if p >= len(owners) {
			break
		}
		i, ok := idx[o]
		if !ok || !members[i].Eligible(p) || count[i] >= quota[i] {
			continue
		}
		owners[p] = o
		count[i]++
	}
}

type pair struct {
	member, partition int
	score             uint64
}

func rankPairs(n int, members []member.Member) []pair {
	pairs := make([]pair, 0, n*len(members))
	for mi, m := range members {
		for p := 0; p < n; p++ {
			if m.Eligible(p) {
				pairs = append(pairs, pair{mi, p, score(m.Name, p)})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].score != pairs[j].score {
			return pairs[i].score > pairs[j].score
		}
		if pairs[i].partition != pairs[j].partition {
			return pairs[i].partition < pairs[j].partition
		}
		return members[pairs[i].member].Name < members[pairs[j].member].Name
	})
	return pairs
}

// fillPass gives partitions the fair pass could not place to any eligible member under its
// cap, least loaded first.
func fillPass(pairs []pair, members []member.Member, current, owners []string, count []int) {
	idx := make(map[string]int, len(members))
	for i, m := range members {
		idx[m.Name] = i
	}
	for p, o := range current {
		if p >= len(owners) || owners[p] != "" {
			continue
		}
		if i, ok := idx[o]; ok && members[i].Eligible(p) && underCap(members[i], count[i]) {
			owners[p] = o
			count[i]++
		}
	}
	for {
		best := -1
		for i, pr := range pairs {
			if owners[pr.partition] != "" || !underCap(members[pr.member], count[pr.member]) {
				continue
			}
			if best < 0 || count[pr.member] < count[pairs[best].member] {
				best = i
			}
		}
		if best < 0 {
			return
		}
		pr := pairs[best]
		owners[pr.partition] = members[pr.member].Name
		count[pr.member]++
	}
}

func underCap(m member.Member, c int) bool {
	return m.MaxLeased != member.NoLeases && (m.MaxLeased <= 0 || c < m.MaxLeased)
}

// score is the rendezvous weight of (member, partition): FNV-1a 64 with a splitmix finalizer.
func score(member string, p int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(strconv.Itoa(p)))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Owned returns the partitions Assign gives to name.
func Owned(owners []string, name string) []int {
	var out []int
	for p, o := range owners {
		if o == name {
			out = append(out, p)
		}
	}
	return out
}

// named drops members without a name: "" means "no owner" here, so such a member (only
// possible through hand-written membership data) could never be counted as holding anything.
func named(members []member.Member) []member.Member {
	out := members[:0:0]
	for _, m := range members {
		if m.Name != "" {
			out = append(out, m)
		}
	}
	return out
}
