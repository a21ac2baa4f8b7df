package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimesAreFormattedInOnePlace: no command formats a time itself; every time goes through
// output.go's helpers (timeText, jsonTime, rfc3339), so the CLI prints one format.
func TestTimesAreFormattedInOnePlace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "output.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Format" || sel.Sel.Name == "AppendFormat") {
				t.Errorf("%s: a time formatted outside output.go: use timeText, jsonTime or rfc3339", fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// TestCLIPauseTimesLikeEveryOtherTime: pause, a second pause and stats print the pause's time
// as every other table does (local time with its zone, to the second; --utc in UTC), and
// -o json as every other JSON time (UTC with milliseconds).
func TestCLIPauseTimesLikeEveryOtherTime(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	const topic, group = "pausetimes", "workers"
	require.NoError(t, e.adm.CreateTopic(e.ctx, topic, 1))
	e.publishN(topic, 0, 1)
	e.group("stream:topic:{"+topic+":p:0}", group)
	text := `\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC`
	assert.Regexp(t, regexp.MustCompile(`paused group "workers" on topic "pausetimes" \(since `+text+`\)`), e.ok("pause", topic, group, "--utc"))
	assert.Regexp(t, regexp.MustCompile(`already paused \(since `+text+`\)`), e.ok("pause", topic, group, "--utc"))
	assert.Regexp(t, regexp.MustCompile(`(?m)^paused by an operator since `+text+` \(streamq resume`), e.ok("stats", topic, group, "--utc"))
	var v pauseView
	e.jsonOf(&v, "pause", topic, group)
	assert.Regexp(t, `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`, v.PausedAt)
	var s statsView
	e.jsonOf(&s, "stats", topic, group)
	assert.Equal(t, v.PausedAt, s.PausedAt)
}
