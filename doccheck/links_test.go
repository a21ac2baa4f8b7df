package doccheck_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/doccheck"
)

var (
	fencedBlock = regexp.MustCompile("(?ms)^ *(```|~~~).*?^ *(```|~~~)")
	heading     = regexp.MustCompile(`(?m)^#+ (.*)$`)
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	notInSlug   = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// prose is a page without its fenced blocks.
func prose(t *testing.T, file string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, file))
	require.NoError(t, err)
	return fencedBlock.ReplaceAllString(string(src), "")
}

// anchors are the heading anchors of a page, as GitHub makes them.
func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(prose(t, file), -1) {
		slug := notInSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		out[strings.ReplaceAll(slug, " ", "-")] = true
	}
	return out
}

// TestDocsLinks: every relative link of README.md and docs/*.md names a file that exists
// and, for a Markdown page, a heading it has; README links to every docs page, so every
// section moved out of it stays reachable from it.
func TestDocsLinks(t *testing.T) {
	files, err := doccheck.DocFiles(root)
	require.NoError(t, err)
	for _, file := range files {
		for _, m := range mdLink.FindAllStringSubmatch(prose(t, file), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			if _, err := os.Stat(filepath.Join(root, target)); err != nil {
				assert.Fail(t, "a link names a missing file", "%s: %s", file, link)
				continue
			}
			if anchor != "" && strings.HasSuffix(target, ".md") {
				assert.True(t, anchors(t, target)[anchor], "%s: %s: %s has no heading #%s", file, link, target, anchor)
			}
		}
	}
	readme := prose(t, "README.md")
	for _, file := range files {
		if strings.HasPrefix(file, "docs/") {
			assert.True(t, strings.Contains(readme, "]("+file), "README.md does not link to %s", file)
		}
	}
}
