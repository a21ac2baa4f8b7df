package doccheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Checker checks Go blocks: a compiled block is type-checked with go/types against the
// export data of the doccheck module's packages, an excerpt is compared with its file. Not
// safe for concurrent use.
type Checker struct {
	root      string // the repository root; excerpts' paths are relative to it
	goVersion string // the root module's go directive: a snippet compiles for its users
	fset      *token.FileSet
	exports   *exports
	scaffold  []*ast.File // the scaffold package's files
	pkgName   string      // the scaffold package's name, that of every snippet
	used      map[string]bool
}

// NewChecker returns a Checker for the repository at root with the doccheck module at
// moduleDir (its scaffold package in moduleDir/scaffold). It runs `go list -export` for the
// packages of Imports and the scaffold's (building them when the build cache lacks them).
func NewChecker(root, moduleDir string) (*Checker, error) {
	version, err := goDirective(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	c := &Checker{root: root, goVersion: version, fset: token.NewFileSet(), used: map[string]bool{}}
	if err := c.parseScaffold(filepath.Join(moduleDir, "scaffold")); err != nil {
		return nil, err
	}
	c.exports = newExports(c.fset, moduleDir)
	paths := []string{"./scaffold"}
	for _, p := range Imports {
		paths = append(paths, p)
	}
	if err := c.exports.need(paths); err != nil {
		return nil, err
	}
	return c, nil
}

// goVersionLine is the go directive of a go.mod file.
var goVersionLine = regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`)

// goDirective returns the go directive of the go.mod file at path, as a go/types version.
func goDirective(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("doccheck: %w", err)
	}
	m := goVersionLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("doccheck: %s has no go directive", path)
	}
	return "go" + string(m[1]), nil
}

// parseScaffold parses the scaffold package's files (tests aside).
func (c *Checker) parseScaffold(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return fmt.Errorf("doccheck: scaffold: %w", err)
	}
	if len(names) == 0 {
		return fmt.Errorf("doccheck: no scaffold package in %s", dir)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(c.fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("doccheck: scaffold: %w", err)
		}
		c.scaffold = append(c.scaffold, f)
		c.pkgName = f.Name.Name
	}
	return nil
}

// Check checks b: a compiled block compiles, an excerpt is in its file. A skipped block
// (<!-- not-go-checked: reason -->) passes: the caller reports it. A failure is a
// *BlockError.
func (c *Checker) Check(b Block) error {
	switch b.Marker.Kind {
	case Skipped:
		return nil
	case Excerpt:
		return CheckExcerpt(c.root, b)
	}
	if strings.TrimSpace(b.Source) == "" {
		return &BlockError{Block: b, Problems: []Problem{{Msg: "empty Go block"}}}
	}
	s, err := parseSnippet(c.fset, b, c.pkgName)
	if err != nil {
		return c.parseError(b, err)
	}
	if s.mode == WholeFile {
		return c.typeCheck(s, []*ast.File{s.file}, true)
	}
	f, err := c.withImports(s)
	if err != nil {
		return c.parseError(b, err)
	}
	return c.typeCheck(s, append(c.scaffoldWithout(topLevelNames(f)), f), false)
}

// withImports parses s again with the imports of the table it needs: the names it uses as
// qualifiers that it neither imports nor declares.
func (c *Checker) withImports(s *snippet) (*ast.File, error) {
	if err := c.exports.need(importPaths(s.file)); err != nil {
		return nil, err
	}
	imported := importedNames(s.file, c.exports.names())
	declared := topLevelNames(s.file)
	extra := map[string]string{}
	for name := range qualifiers(s.file) {
		if path, ok := Imports[name]; ok && !imported[name] && !declared[name] {
			extra[name] = path
		}
	}
	return parser.ParseFile(c.fset, snippetFile, s.source(c.pkgName, extra), parser.SkipObjectResolution)
}

// importPaths returns the paths f imports.
func importPaths(f *ast.File) []string {
	var paths []string
	for _, imp := range f.Imports {
		paths = append(paths, strings.Trim(imp.Path.Value, "`\""))
	}
	return paths
}

// scaffoldWithout returns the scaffold's files without the declarations of names (a block
// that declares one replaces it).
func (c *Checker) scaffoldWithout(names map[string]bool) []*ast.File {
	if len(names) == 0 {
		return c.scaffold
	}
	out := make([]*ast.File, len(c.scaffold))
	for i, f := range c.scaffold {
		cp := *f
		cp.Decls = nil
		for _, d := range f.Decls {
			if d = without(d, names); d != nil {
				cp.Decls = append(cp.Decls, d)
			}
		}
		out[i] = &cp
	}
	return out
}

// without returns d without its declarations of names: nil when none is left.
func without(d ast.Decl, names map[string]bool) ast.Decl {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil && names[d.Name.Name] {
			return nil
		}
	case *ast.GenDecl:
		if d.Tok == token.IMPORT {
			return d
		}
		cp := *d
		cp.Specs = nil
		for _, spec := range d.Specs {
			if !declares(spec, names) {
				cp.Specs = append(cp.Specs, spec)
			}
		}
		if len(cp.Specs) == 0 {
			return nil
		}
		return &cp
	}
	return d
}

// declares tells whether spec declares one of names.
func declares(spec ast.Spec, names map[string]bool) bool {
	switch sp := spec.(type) {
	case *ast.TypeSpec:
		return names[sp.Name.Name]
	case *ast.ValueSpec:
		for _, id := range sp.Names {
			if names[id.Name] {
				return true
			}
		}
	}
	return false
}

// unusedError is the message of an error that is no error for a snippet: a name or import
// the excerpt declares for the reader and does not use.
var unusedError = regexp.MustCompile(`^declared and not used: |imported (as \S+ )?and not used$`)

// typeCheck type-checks files as one package, errors in s's block reported against it;
// strict counts unused variables and imports too.
func (c *Checker) typeCheck(s *snippet, files []*ast.File, strict bool) error {
	if err := c.exports.need(importPaths(s.file)); err != nil {
		return c.parseError(s.block, err)
	}
	var problems []Problem
	conf := types.Config{
		Importer:  c.exports.importer(),
		GoVersion: c.goVersion,
		Error: func(err error) {
			var te types.Error
			if !errors.As(err, &te) {
				problems = append(problems, Problem{Msg: err.Error()})
				return
			}
			if !strict && te.Soft && unusedError.MatchString(te.Msg) {
				return
			}
			problems = append(problems, c.problem(te.Fset.Position(te.Pos), te.Msg))
		},
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, _ := conf.Check("doccheck/"+c.pkgName, c.fset, files, info)
	c.recordUses(pkg, s, info)
	if len(problems) > 0 {
		return &BlockError{Block: s.block, Mode: s.mode, Problems: inOrder(s.block, problems)}
	}
	return nil
}

// recordUses notes the scaffold's names the block used.
func (c *Checker) recordUses(pkg *types.Package, s *snippet, info *types.Info) {
	if pkg == nil || s.mode == WholeFile {
		return
	}
	for id, obj := range info.Uses {
		if obj.Parent() == pkg.Scope() && c.fset.Position(id.Pos()).Filename == s.block.File &&
			c.fset.Position(obj.Pos()).Filename != s.block.File {
			c.used[obj.Name()] = true
		}
	}
}

// ScaffoldNames returns the scaffold's package-level variables and functions, each with
// whether a block checked so far used it.
func (c *Checker) ScaffoldNames() map[string]bool {
	out := map[string]bool{}
	for _, f := range c.scaffold {
		for _, d := range f.Decls {
			for _, name := range valueNames(d) {
				out[name] = c.used[name]
			}
		}
	}
	return out
}

// valueNames returns the names of the variables and functions d declares, blanks aside.
func valueNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			if vs, ok := spec.(*ast.ValueSpec); ok {
				for _, id := range vs.Names {
					if id.Name != "_" {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

// parseError is the BlockError of a parse or import error of b.
func (c *Checker) parseError(b Block, err error) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return &BlockError{Block: b, Problems: []Problem{{Msg: err.Error()}}}
	}
	problems := make([]Problem, 0, len(list))
	for i, e := range list {
		if i > 0 && e.Pos.Filename == list[i-1].Pos.Filename && e.Pos.Line == list[i-1].Pos.Line {
			continue // the parser's next error on a line follows from its first
		}
		problems = append(problems, c.problem(e.Pos, e.Msg))
	}
	return &BlockError{Block: b, Problems: inOrder(b, problems)}
}

// inOrder sorts problems by their line in b, the others (after the block, in another
// file) after them.
func inOrder(b Block, problems []Problem) []Problem {
	rank := func(p Problem) int {
		if p.File == b.File && p.Line > 0 {
			return p.Line
		}
		return math.MaxInt
	}
	sort.SliceStable(problems, func(i, j int) bool { return rank(problems[i]) < rank(problems[j]) })
	return problems
}

// problem is msg at pos: a line of the block, the code around it, or the scaffold.
func (c *Checker) problem(pos token.Position, msg string) Problem {
	p := Problem{Msg: msg, File: pos.Filename, Line: pos.Line}
	if pos.Filename == wrapperFile {
		p.File, p.Line = "", 0
	}
	return p
}
