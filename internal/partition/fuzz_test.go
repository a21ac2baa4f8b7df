package partition

import "testing"

// FuzzParseCount: the topic meta's partitionCount is stored data; anything reads as a
// positive count.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"8", "0", "-3", "x", "", "99999999999999999999", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := ParseCount(s); n < 1 {
			t.Fatalf("ParseCount(%q) = %d", s, n)
		}
	})
}
