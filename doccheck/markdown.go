package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Block is a fenced Go code block (```go) of a Markdown file.
type Block struct {
	File   string // the Markdown file, as given to Blocks (relative to the repository root)
	Line   int    // the line of the opening fence, from 1; the block's first line is Line+1
	Source string // the lines between the fences, the fence's indentation removed
	Marker Marker // the marker comment right before the fence, if any
}

// MarkerKind is what a marker comment before a block asks for.
type MarkerKind int

const (
	// Compiled (no marker): the block is type-checked against the real packages.
	Compiled MarkerKind = iota
	// Excerpt (<!-- excerpt: path/to/file.go -->): the block's lines are a run of the file's,
	// indentation and trailing spaces aside; the file is built and run by its own tests.
	Excerpt
	// Skipped (<!-- not-go-checked: reason -->): the block is not checked, for the reason given.
	Skipped
)

// Marker is a marker comment: its kind, its argument (the excerpt's path, the reason of a
// skip) and its line.
type Marker struct {
	Kind MarkerKind
	Arg  string
	Line int
}

var (
	// fenceOpen is an opening code fence: its indentation, the fence, the info string's
	// first word.
	fenceOpen = regexp.MustCompile("^( *)(`{3,}|~{3,})\\s*([^\\s`]*)")
	// markerLine is a line holding only a marker comment.
	markerLine = regexp.MustCompile(`^\s*<!--\s*(excerpt|not-go-checked)\b(.*?)-->\s*$`)
	// markerWord is a line that mentions a marker keyword in a comment at all (outside inline
	// code: prose may show the syntax), to report one that does not parse.
	markerWord = regexp.MustCompile(`<!--\s*(excerpt|not-go-checked)\b`)
	// inlineCode is a code span of a Markdown line.
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// DocFiles returns the Markdown files the check covers: README.md and docs/*.md under root,
// relative to root, slash-separated, sorted.
func DocFiles(root string) ([]string, error) {
	files := []string{"README.md"}
	if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	sort.Strings(pages)
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files, nil
}

// ReadBlocks returns the Go blocks of file (relative to root).
func ReadBlocks(root, file string) ([]Block, error) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, fmt.Errorf("doccheck: %w", err)
	}
	return Blocks(file, string(text))
}

// Blocks returns the Go blocks of the Markdown text of file, with their markers. A fenced
// block of another language is skipped whole (a ```go line inside it is its text). It fails
// on a fence that is never closed, and on a marker comment that does not parse or is not
// right before a Go block (blank lines between them allowed).
func Blocks(file, text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	var pending *Marker
	for i := 0; i < len(lines); i++ {
		m, err := marker(file, lines[i], i+1)
		if err != nil {
			return nil, err
		}
		if m != nil || strings.TrimSpace(lines[i]) == "" {
			if m != nil {
				if err := unused(file, pending); err != nil {
					return nil, err
				}
				pending = m
			}
			continue
		}
		open := fenceOpen.FindStringSubmatch(lines[i])
		if open == nil {
			if err := unused(file, pending); err != nil {
				return nil, err
			}
			pending = nil
			continue
		}
		end, err := fenceEnd(file, lines, i, open[2])
		if err != nil {
			return nil, err
		}
		if isGo(open[3]) {
			b := Block{File: file, Line: i + 1, Source: dedent(lines[i+1:end], len(open[1]))}
			if pending != nil {
				b.Marker = *pending
			}
			blocks = append(blocks, b)
		} else if err := unused(file, pending); err != nil {
			return nil, err
		}
		pending = nil
		i = end
	}
	return blocks, unused(file, pending)
}

// marker parses a marker comment line, nil for any other line.
func marker(file, line string, n int) (*Marker, error) {
	m := markerLine.FindStringSubmatch(line)
	if m == nil {
		if markerWord.MatchString(inlineCode.ReplaceAllString(line, "")) {
			return nil, fmt.Errorf("%s:%d: a marker comment is alone on its line: <!-- excerpt: path/to/file.go --> or <!-- not-go-checked: reason -->", file, n)
		}
		return nil, nil
	}
	arg, ok := strings.CutPrefix(strings.TrimSpace(m[2]), ":")
	arg = strings.TrimSpace(arg)
	if !ok || arg == "" {
		return nil, fmt.Errorf("%s:%d: marker %q needs a colon and its argument: <!-- %s: ... -->", file, n, m[1], m[1])
	}
	kind := Excerpt
	if m[1] == "not-go-checked" {
		kind = Skipped
	}
	return &Marker{Kind: kind, Arg: arg, Line: n}, nil
}

// unused fails for a marker that no Go block follows.
func unused(file string, m *Marker) error {
	if m == nil {
		return nil
	}
	return fmt.Errorf("%s:%d: marker comment is not right before a ```go block", file, m.Line)
}

// fenceEnd returns the index of the line closing the fence opened at lines[open]: the same
// character, at least as long, nothing else on the line.
func fenceEnd(file string, lines []string, open int, fence string) (int, error) {
	for j := open + 1; j < len(lines); j++ {
		l := strings.TrimSpace(lines[j])
		if strings.HasPrefix(l, fence) && strings.Trim(l, fence[:1]) == "" {
			return j, nil
		}
	}
	return 0, fmt.Errorf("%s:%d: code fence %s is never closed", file, open+1, fence)
}

// isGo tells a Go block by its info string.
func isGo(info string) bool {
	info = strings.ToLower(info)
	return info == "go" || info == "golang"
}

// dedent joins lines, each without up to indent leading spaces (the fence's indentation in
// a list item).
func dedent(lines []string, indent int) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		n := 0
		for n < indent && n < len(l) && l[n] == ' ' {
			n++
		}
		out[i] = l[n:]
	}
	return strings.Join(out, "\n")
}
