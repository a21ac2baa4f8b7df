package doccheck

import (
	"regexp"
	"strings"
)

// Span is a code span of a Markdown file's prose: the line it starts on and its text.
type Span struct {
	Line int
	Code string
}

var (
	// codeSpan is a code span, which may run over line ends within a paragraph.
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// funcLiteral is a Go function literal with a body: func(...) ... { ... }.
	funcLiteral = regexp.MustCompile(`func\s*\([^)]*\)[^{}]*\{[^}]*\}`)
)

// InlineFuncs returns the code spans of text's prose (outside fenced blocks) that hold a Go
// function literal: code that long belongs in a ```go block, where the check compiles it,
// not in a span nobody compiles.
func InlineFuncs(text string) []Span {
	lines := strings.Split(text, "\n")
	var out []Span
	para, start := []string{}, 0
	flush := func() {
		joined := strings.Join(para, "\n")
		for _, m := range codeSpan.FindAllStringSubmatchIndex(joined, -1) {
			code := strings.Join(strings.Fields(joined[m[2]:m[3]]), " ")
			if funcLiteral.MatchString(code) {
				out = append(out, Span{Line: start + strings.Count(joined[:m[0]], "\n") + 1, Code: code})
			}
		}
		para = para[:0]
	}
	for i := 0; i < len(lines); i++ {
		if open := fenceOpen.FindStringSubmatch(lines[i]); open != nil {
			flush()
			end, err := fenceEnd("", lines, i, open[2])
			if err != nil {
				return out // Blocks reports the fence that is never closed
			}
			i = end
			continue
		}
		if strings.TrimSpace(lines[i]) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			start = i
		}
		para = append(para, lines[i])
	}
	flush()
	return out
}
