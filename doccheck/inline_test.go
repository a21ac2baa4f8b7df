package doccheck_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamq-dev/streamq/doccheck"
)

// TestInlineFuncs finds a function literal in a code span, also one that runs over a line
// end, and leaves alone spans without a body and the text of fenced blocks.
func TestInlineFuncs(t *testing.T) {
	text := "Intro `streamq.FailureMiddleware(nil)` and `func(err error) bool` without a body.\n\n" +
		"Under `middleware.Retry`:\n`ShouldRetry: func(err error) bool { return !errors.Is(err, streamq.ErrOutage) }`.\n\n" +
		"```go\nx := func() { `not prose` }\n```\n\n" +
		"Give it `ShouldRetry: func(p middleware.RetryParams) bool\n{ return !errors.Is(p.Err, streamq.ErrDeadLettered) }` so.\n"
	got := doccheck.InlineFuncs(text)
	require.Len(t, got, 2)
	assert.Equal(t, doccheck.Span{Line: 4, Code: "ShouldRetry: func(err error) bool { return !errors.Is(err, streamq.ErrOutage) }"}, got[0])
	assert.Equal(t, 10, got[1].Line, "the line the span starts on")
	assert.Equal(t, "ShouldRetry: func(p middleware.RetryParams) bool { return !errors.Is(p.Err, streamq.ErrDeadLettered) }", got[1].Code)
}

// TestNoUncheckedGoInProse: no page of README.md and docs/ shows a Go function literal in a
// code span, where it would never be compiled: such code goes in a ```go block.
func TestNoUncheckedGoInProse(t *testing.T) {
	files, err := doccheck.DocFiles(root)
	require.NoError(t, err)
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		require.NoError(t, err)
		for _, s := range doccheck.InlineFuncs(string(text)) {
			t.Errorf("%s:%d: Go code in a code span is not compiled: put it in a ```go block: %s", file, s.Line, s.Code)
		}
	}
}
