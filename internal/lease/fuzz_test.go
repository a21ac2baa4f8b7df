package lease

import (
	"testing"

	"github.com/streamq-dev/streamq/internal/member"
)

// FuzzParseMemberAndAssign: member capabilities are stored data; any value parses, and the
// assignment over parsed members never panics and gives each partition at most one owner
// that may take it.
func FuzzParseMemberAndAssign(f *testing.F) {
	f.Add("a", "2,1,3", "b", "", 7)
	f.Add("x", "-1,-1,-1", "y", "0,5,0", 12)
	f.Add("", ",,", "z", "999999999999999999999,1,1", 3)
	f.Fuzz(func(t *testing.T, n1, c1, n2, c2 string, n int) {
		n = n % 300
		if n < 0 {
			n = -n
		}
		members := []member.Member{member.ParseMember(n1, c1), member.ParseMember(n2, c2)}
		owners := Assign(n, members, nil)
		if len(owners) != n {
			t.Fatalf("%d owners for %d partitions", len(owners), n)
		}
		for p, o := range owners {
			if o == "" {
				continue
			}
			ok := false
			for _, m := range members {
				ok = ok || (m.Name == o && m.Eligible(p))
			}
			if !ok {
				t.Fatalf("partition %d given to %q, which may not take it", p, o)
			}
		}
	})
}
