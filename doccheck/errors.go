package doccheck

import (
	"fmt"
	"strings"
)

// BlockError is a block that fails the check: the block, how it was compiled, and each
// problem.
type BlockError struct {
	Block    Block
	Mode     Mode // how the block was compiled; Unparsed for a syntax error
	Problems []Problem
}

// Problem is one error of a block. File and Line are where it is: the block's Markdown
// file and line, or another file (the scaffold, an excerpt's); no File: in the code the
// check wraps the block in (an unclosed brace shows there).
type Problem struct {
	File string
	Line int
	Msg  string
}

// Error is the report for a doc writer: the block, then each problem with the block's line
// (1 is the line after the fence), its Markdown line and the line's code.
func (e *BlockError) Error() string {
	var w strings.Builder
	b := e.Block
	fmt.Fprintf(&w, "%s:%d: the ```go block %s:", b.File, b.Line, e.verb())
	lines := strings.Split(b.Source, "\n")
	for _, p := range e.Problems {
		switch {
		case p.File == b.File && p.Line > b.Line && p.Line <= b.Line+len(lines):
			n := p.Line - b.Line
			fmt.Fprintf(&w, "\n\tblock line %d (%s:%d): %s\n\t\t%s", n, p.File, p.Line, p.Msg,
				strings.TrimSpace(lines[n-1]))
		case p.File == "":
			fmt.Fprintf(&w, "\n\tafter the block's last line: %s", p.Msg)
		case p.Line > 0:
			fmt.Fprintf(&w, "\n\t%s:%d: %s", p.File, p.Line, p.Msg)
		default:
			fmt.Fprintf(&w, "\n\t%s", p.Msg)
		}
	}
	return w.String()
}

func (e *BlockError) verb() string {
	switch {
	case e.Block.Marker.Kind == Excerpt:
		return "is not an excerpt of " + e.Block.Marker.Arg
	case e.Mode == Unparsed:
		return "does not parse as Go"
	}
	return fmt.Sprintf("does not compile (as %s)", e.Mode)
}
