//go:build soak

package soak

import (
	"fmt"
	"sort"
	"strings"
)

// maxExamples is how many examples of each kind of failure are listed.
const maxExamples = 10

// verdict collects the failed checks: per check, a count and a few examples.
type verdict struct {
	counts   map[string]int
	examples map[string][]string
}

func newVerdict() *verdict {
	return &verdict{counts: map[string]int{}, examples: map[string][]string{}}
}

// fail records one failure of check.
func (v *verdict) fail(check, format string, args ...any) {
	v.counts[check]++
	if len(v.examples[check]) < maxExamples {
		v.examples[check] = append(v.examples[check], fmt.Sprintf(format, args...))
	}
}

func (v *verdict) ok() bool { return len(v.counts) == 0 }

func (v *verdict) String() string {
	checks := make([]string, 0, len(v.counts))
	for c := range v.counts {
		checks = append(checks, c)
	}
	sort.Strings(checks)
	var b strings.Builder
	for _, c := range checks {
		fmt.Fprintf(&b, "FAIL %s: %d\n", c, v.counts[c])
		for _, e := range v.examples[c] {
			fmt.Fprintf(&b, "    %s\n", e)
		}
	}
	return b.String()
}
