package doccheck_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/doccheck"
)

// root is the repository root, from this package's directory.
const root = ".."

var (
	checkerOnce sync.Once
	checker     *doccheck.Checker
	checkerErr  error
)

// newChecker returns the Checker of the repository, built once for every test (go list
// -export of every package the docs use).
func newChecker(t *testing.T) *doccheck.Checker {
	t.Helper()
	checkerOnce.Do(func() { checker, checkerErr = doccheck.NewChecker(root, ".") })
	require.NoError(t, checkerErr)
	return checker
}

// TestDocsCompile: every Go block of README.md and docs/*.md compiles, or is an excerpt of
// the file its marker names (which that file's own tests build and run), or is skipped with
// its reason (printed). One subtest per block, named by its file and fence line.
func TestDocsCompile(t *testing.T) {
	c := newChecker(t)
	files, err := doccheck.DocFiles(root)
	require.NoError(t, err)
	counts := map[doccheck.MarkerKind]int{}
	for _, file := range files {
		blocks, err := doccheck.ReadBlocks(root, file)
		require.NoError(t, err)
		for _, b := range blocks {
			counts[b.Marker.Kind]++
			t.Run(fmt.Sprintf("%s:%d", b.File, b.Line), func(t *testing.T) {
				if b.Marker.Kind == doccheck.Skipped {
					fmt.Printf("doccheck: skipped %s:%d: %s\n", b.File, b.Line, b.Marker.Arg)
					t.Skip(b.Marker.Arg)
				}
				if err := c.Check(b); err != nil {
					t.Error(err)
				}
			})
		}
	}
	require.NotZero(t, counts[doccheck.Compiled]+counts[doccheck.Excerpt], "no Go block in %v", files)
	fmt.Printf("doccheck: %d Go blocks in %d files: %d compiled, %d excerpts, %d skipped\n",
		counts[doccheck.Compiled]+counts[doccheck.Excerpt]+counts[doccheck.Skipped], len(files),
		counts[doccheck.Compiled], counts[doccheck.Excerpt], counts[doccheck.Skipped])
	if unused := unusedScaffold(c); len(unused) > 0 {
		fmt.Printf("doccheck: scaffold names no block uses: %s\n", strings.Join(unused, ", "))
	}
}

// unusedScaffold returns the scaffold's names no block used, sorted.
func unusedScaffold(c *doccheck.Checker) []string {
	var out []string
	for name, used := range c.ScaffoldNames() {
		if !used {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
