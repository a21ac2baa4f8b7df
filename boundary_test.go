package streamq

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goRedis is the import path of go-redis.
const goRedis = "github.com/redis/go-redis/v9"

// boundaryDirs are the packages that must reach Redis only through internal/: their non-test
// files may name redis.UniversalClient (the client a user passes in configs and options) and
// nothing else of go-redis.
var boundaryDirs = []string{".", "admin"}

// boundaryExceptions are the packages of boundaryDirs still known to break the rule, with why.
// Their uses are logged, not failed on.
var boundaryExceptions = map[string]string{
	// admin/ is still a second Redis layer (its own pipelines, replies and predicates). The
	// next step is moving its reads (XINFO, XPENDING, the lag algorithm) into internal/, then
	// deleting this entry.
	"admin": "admin's reads are not in internal/ yet",
}

// TestRedisBoundary fails when a non-test file of the root package (or of admin/, once it is
// off boundaryExceptions) names a go-redis identifier other than UniversalClient: a command,
// pipeline, script, reply type or predicate, which belong in internal/. It parses the files:
// comments and strings do not count. It would have failed on the root package before the
// boundary moves (batcher.go, claims.go, cluster.go, fetcher.go, mover.go, rebalance.go,
// worker.go); to see it fail, write redis.Nil into any root file, or copy this file into an
// export of the commit before them (git archive 39d2f29) and run it there.
func TestRedisBoundary(t *testing.T) {
	for _, dir := range boundaryDirs {
		uses, err := goRedisUses(dir)
		if err != nil {
			t.Fatal(err)
		}
		if why, known := boundaryExceptions[dir]; known {
			if len(uses) == 0 {
				t.Errorf("%s keeps the boundary now: delete its entry in boundaryExceptions", dir)
			}
			t.Logf("%s: %d uses of go-redis beyond UniversalClient, a known exception (%s)", dir, len(uses), why)
			continue
		}
		for _, u := range uses {
			t.Errorf("%s: go-redis used outside internal/ (only redis.UniversalClient may be named here)", u)
		}
	}
}

// goRedisUses lists, as "file:line: redis.Name", every go-redis identifier other than
// UniversalClient named in dir's non-test Go files, and every dot import of go-redis.
func goRedisUses(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var uses []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		uses = append(uses, fileGoRedisUses(fset, f)...)
	}
	return uses, nil
}

// fileGoRedisUses lists the go-redis identifiers other than UniversalClient that f names.
func fileGoRedisUses(fset *token.FileSet, f *ast.File) []string {
	local := goRedisName(f)
	if local == "" {
		return nil
	}
	if local == "." {
		return []string{fset.Position(f.Package).String() + ": dot import of " + goRedis}
	}
	var uses []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == local && sel.Sel.Name != "UniversalClient" {
			uses = append(uses, fset.Position(sel.Pos()).String()+": redis."+sel.Sel.Name)
		}
		return true
	})
	return uses
}

// goRedisName is the name f imports go-redis under ("" when it does not, "_" for a blank
// import, which names nothing).
func goRedisName(f *ast.File) string {
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path != goRedis {
			continue
		}
		switch {
		case imp.Name == nil:
			return "redis"
		case imp.Name.Name == "_":
			return ""
		default:
			return imp.Name.Name
		}
	}
	return ""
}
