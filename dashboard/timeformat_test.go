package dashboard

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimesAreFormattedInOnePlace: neither the dashboard nor admin formats a time itself;
// every time goes through its package's timetext.go (timeText, at, rfc3339 here; timeText,
// rfc3339Nano in admin), so each prints one format, the CLI's: "2026-12-01 19:55:15 UTC".
func TestTimesAreFormattedInOnePlace(t *testing.T) {
	for _, dir := range []string{".", "../admin"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == "timetext.go" {
				continue
			}
			for _, pos := range formatCalls(t, name) {
				t.Errorf("%s: a time formatted outside timetext.go: use its helpers", pos)
			}
		}
	}
}

// formatCalls are the positions of the Format and AppendFormat calls in the file name.
func formatCalls(t *testing.T, name string) []token.Position {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, 0)
	require.NoError(t, err)
	var out []token.Position
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Format" || sel.Sel.Name == "AppendFormat") {
			out = append(out, fset.Position(call.Pos()))
		}
		return true
	})
	return out
}
