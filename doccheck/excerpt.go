package doccheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// CheckExcerpt checks that the lines of b (an <!-- excerpt: file --> block) are a run of
// consecutive lines of its file under root, each line's indentation and trailing spaces
// aside, and blank lines around the block aside. A failure is a *BlockError naming the
// block's first line that does not follow.
func CheckExcerpt(root string, b Block) error {
	name := b.Marker.Arg
	if path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "..") || strings.Contains(name, `\`) {
		return excerptError(b, 0, "the excerpt's path is relative to the repository root, slash-separated, inside it: "+name)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return excerptError(b, 0, err.Error())
	}
	want, first := trimmedLines(b.Source)
	if len(want) == 0 {
		return excerptError(b, 0, "empty Go block")
	}
	have, _ := trimmedLines(string(data))
	at, n := longestRun(have, want)
	if n == len(want) {
		return nil
	}
	msg := "this line is not in " + name
	if n > 0 {
		msg = fmt.Sprintf("the block's lines before this one are %s:%d-%d; this line does not follow them there",
			name, at+1, at+n)
	}
	return excerptError(b, b.Line+first+n+1, msg)
}

// excerptError is a BlockError of an excerpt, at the Markdown line (0: the block).
func excerptError(b Block, line int, msg string) error {
	p := Problem{File: b.File, Line: line, Msg: msg}
	if line == 0 {
		p.Line = b.Marker.Line
	}
	return &BlockError{Block: b, Mode: Unparsed, Problems: []Problem{p}}
}

// trimmedLines returns the lines of s without indentation and trailing spaces, blank lines
// at the start and end dropped, and the index of its first kept line.
func trimmedLines(s string) ([]string, int) {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	first := 0
	for first < len(lines) && lines[first] == "" {
		first++
	}
	last := len(lines)
	for last > first && lines[last-1] == "" {
		last--
	}
	return lines[first:last], first
}

// longestRun returns where in have the longest prefix of want starts, and its length.
func longestRun(have, want []string) (at, n int) {
	for i := range have {
		k := 0
		for k < len(want) && i+k < len(have) && have[i+k] == want[k] {
			k++
		}
		if k > n {
			at, n = i, k
		}
		if n == len(want) {
			break
		}
	}
	return at, n
}
