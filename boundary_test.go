package streamq_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goRedis is the import path of go-redis.
const goRedis = "github.com/redis/go-redis/v9"

// boundaryDirs are the packages that must reach Redis only through internal/: their non-test
// files may name redis.UniversalClient (the client a user passes in configs and options) and
// nothing else of go-redis, and may pass such a client on but not call its methods.
var boundaryDirs = []string{".", "admin"}

// boundaryExceptions are the packages of boundaryDirs still known to break the rule, with why.
// Their uses are logged, not failed on. None is left: admin/ went through internal/ last.
var boundaryExceptions = map[string]string{}

// boundaryAllowed are the go-redis names an exported signature of a boundary package keeps
// for compatibility, by "dir.Func": only that function's signature may name them, never its
// body.
var boundaryAllowed = map[string][]string{
	// admin.DecodeEntry decodes an entry a tool read with its own client.
	"admin.DecodeEntry": {"XMessage"},
}

// TestRedisBoundary fails when a non-test file of the root package or of admin/ (unless it is
// on boundaryExceptions) names a go-redis identifier other than UniversalClient (a command,
// pipeline, script, reply type or predicate, which belong in internal/), or calls a method of
// a redis.UniversalClient value: a.rdb.XInfoGroups(ctx, k), rdb.Pipelined(...),
// cfg.Client.Ping(ctx). It parses the files: comments and strings do not count.
//
// It would have failed on the root package before the boundary moves (batcher.go, claims.go,
// cluster.go, fetcher.go, mover.go, rebalance.go, worker.go), and on admin/ before its reads
// went to internal/: at commit d414a94 it finds there 111 go-redis identifiers besides
// DecodeEntry's parameter (redis.XInfoGroup, redis.Nil, redis.HasErrorPrefix, ...) and 30
// client calls (a.rdb.XInfoGroups, a.rdb.Pipelined, ...). To see it fail, write redis.Nil or
// a.rdb.Ping(ctx) into any of their files, or copy this file and boundary_calls_test.go into
// an export of such a commit (git archive d414a94) and run it there.
func TestRedisBoundary(t *testing.T) {
	t.Parallel()
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
			t.Errorf("%s: go-redis used outside internal/ (only redis.UniversalClient may be named here, and passed on)", u)
		}
	}
}

// goRedisUses lists, as "file:line: what", every go-redis identifier other than
// UniversalClient named in dir's non-test Go files, every dot import of go-redis and every
// method call on a redis.UniversalClient value.
func goRedisUses(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return nil, err
	}
	clients := packageClients(files)
	var uses []string
	for _, f := range files {
		uses = append(uses, fileGoRedisUses(fset, f, allowedIn(dir, f))...)
		uses = append(uses, clientCalls(fset, f, clients)...)
	}
	return uses, nil
}

// parseDir parses dir's non-test Go files.
func parseDir(fset *token.FileSet, dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
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
		files = append(files, f)
	}
	return files, nil
}

// allowedIn returns the go-redis selectors of f that boundaryAllowed lets dir's signatures
// name.
func allowedIn(dir string, f *ast.File) map[*ast.SelectorExpr]bool {
	allowed := map[*ast.SelectorExpr]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		names := boundaryAllowed[dir+"."+fd.Name.Name]
		ast.Inspect(fd.Type, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				for _, name := range names {
					if sel.Sel.Name == name {
						allowed[sel] = true
					}
				}
			}
			return true
		})
	}
	return allowed
}

// fileGoRedisUses lists the go-redis identifiers other than UniversalClient that f names,
// except the allowed selectors.
func fileGoRedisUses(fset *token.FileSet, f *ast.File, allowed map[*ast.SelectorExpr]bool) []string {
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
		if !ok || allowed[sel] {
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

// module is this module's import path.
const module = "github.com/streamq-dev/streamq"

// rootImports are the packages of internal/ the root package may import: the engine's entry
// points (consume, publish, health) and helpers that talk to no Redis on their own (key
// names, the entry format, the clock, the fence's error, the client predicates and version
// of internal/server).
var rootImports = []string{"internal/consume", "internal/publish", "internal/health",
	"internal/keys", "internal/codec", "internal/clock", "internal/fence", "internal/server"}

// enginePackages run the engine: admin composes storage packages and imports none of them.
var enginePackages = []string{"internal/consume", "internal/publish", "internal/health", "internal/run",
	"internal/lease", "internal/retry", "internal/store"}

// TestImportsPointDown: the root package reaches Redis only through the engine (rootImports),
// and admin never imports the engine (enginePackages). It reads the import clauses of the
// non-test files; to see it fail, import internal/stream in a root file or internal/consume in
// an admin file.
func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir     string
		allowed func(rel string) bool
		rule    string
	}{
		{".", func(rel string) bool { return slices.Contains(rootImports, rel) },
			"the root package imports only " + strings.Join(rootImports, ", ") + " of internal/"},
		{"admin", func(rel string) bool { return !slices.Contains(enginePackages, rel) },
			"admin imports no engine package (" + strings.Join(enginePackages, ", ") + ")"},
	} {
		imports, err := internalImports(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range imports {
			if !tc.allowed(imp.rel) {
				t.Errorf("%s imports %s: %s", imp.at, imp.rel, tc.rule)
			}
		}
	}
}

type internalImport struct{ at, rel string }

// internalImports lists the imports of this module's internal/ packages in dir's non-test
// files, as paths relative to the module.
func internalImports(dir string) ([]internalImport, error) {
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return nil, err
	}
	var out []internalImport
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(path, module+"/"); ok && strings.HasPrefix(rel, "internal/") {
				out = append(out, internalImport{at: fset.Position(imp.Pos()).String(), rel: rel})
			}
		}
	}
	return out, nil
}
