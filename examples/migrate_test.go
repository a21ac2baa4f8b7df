package examples_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/internal/redistest"
)

// TestMigrate runs the live switch: both subscribers in one Router, the publishers switched,
// the old stream drained, the old handler stopped with nothing left to import.
func TestMigrate(t *testing.T) {
	t.Parallel()
	out := runExample(t, "migrate", "REDIS_URL="+redistest.Start(t).URL())
	for _, want := range []string{"handled 30 of 30 orders: 15 through watermill-redisstream, 15 through streamq",
		"old stream drained: nothing pending, nothing undelivered", "old handler stopped; imported 0 left-over entries"} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 15, strings.Count(out, "redisstream order {"), out)
	assert.Equal(t, 15, strings.Count(out, "streamq     order {"), out)
}

// goBlock is a Go code block of a Markdown page.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestMigrationGuideSnippets: every Go block of docs/migration.md is an excerpt of
// examples/migrate/main.go (line by line, indentation aside), which TestMigrate builds and
// runs: a block that no longer compiles, or drifted from the program, fails here.
func TestMigrationGuideSnippets(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../docs/migration.md")
	require.NoError(t, err)
	program, err := os.ReadFile("migrate/main.go")
	require.NoError(t, err)
	src := normalized(string(program))
	blocks := goBlock.FindAllStringSubmatch(string(guide), -1)
	require.NotEmpty(t, blocks, "docs/migration.md has no Go block")
	for _, b := range blocks {
		assert.Contains(t, src, normalized(b[1]), "a Go block of docs/migration.md is not in examples/migrate/main.go")
	}
}

// normalized is s with each line's indentation and trailing spaces removed.
func normalized(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}
