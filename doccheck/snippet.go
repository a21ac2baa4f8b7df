package doccheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"math"
	"sort"
	"strings"
)

// Mode is how a block is compiled.
type Mode int

const (
	// Unparsed is a block with a syntax error.
	Unparsed Mode = iota
	// WholeFile is a block that starts with a package clause: compiled alone, every error
	// counts (unused variables and imports too).
	WholeFile
	// Declarations is a block of top-level declarations (after its imports, if any).
	Declarations
	// Statements is a block of statements, compiled as a function's body.
	Statements
	// Mixed is a block of declarations then statements.
	Mixed
)

func (m Mode) String() string {
	return [...]string{"unparsed", "a whole file", "declarations", "statements", "declarations then statements"}[m]
}

const (
	// snippetFile is the name a block's Go file is parsed under: a name without a directory,
	// so that the //line directives' relative file names stay as they are (a directive's
	// relative name is relative to the file's directory).
	snippetFile = "snippet.go"
	// wrapperFile names the positions of the code the check adds around a block.
	wrapperFile = "(doccheck wrapper)"
)

// snippet is a block made a Go file of the scaffold's package.
type snippet struct {
	block   Block
	mode    Mode
	imports []string // the block's leading lines that are import declarations
	decls   []string // the lines after them that are top-level declarations
	stmts   []string // the lines after those: the wrapping function's body
	results int      // the results of the wrapping function (from the block's returns)
	file    *ast.File
}

// lineDirective positions what follows at line of the block's Markdown file.
func lineDirective(file string, line int) string {
	return fmt.Sprintf("//line %s:%d\n", file, line)
}

// parseSnippet parses b as a file of package pkg: a whole file; or, after its imports,
// declarations, statements, or declarations then statements, whichever parses first; when
// none does, the errors of the reading that got furthest into the block.
func parseSnippet(fset *token.FileSet, b Block, pkg string) (*snippet, error) {
	if startsWithPackage(b.Source) {
		f, err := parser.ParseFile(fset, snippetFile, lineDirective(b.File, b.Line+1)+b.Source, parser.SkipObjectResolution)
		return &snippet{block: b, mode: WholeFile, file: f}, err
	}
	lines := strings.Split(b.Source, "\n")
	n, err := importLines(fset, b, pkg)
	if err != nil {
		return nil, err
	}
	rest := lines[n:]
	decls := &snippet{block: b, mode: Declarations, imports: lines[:n], decls: rest}
	declErr := decls.parse(fset, pkg)
	if declErr == nil {
		return decls, nil
	}
	stmts := &snippet{block: b, mode: Statements, imports: lines[:n], stmts: rest}
	stmtErr := stmts.parse(fset, pkg)
	if stmtErr == nil {
		return stmts, nil
	}
	furthest := stmtErr
	if further(declErr, furthest) {
		furthest = declErr
	}
	if k := declarationsEnd(declErr, b.Line+1+n); k > 0 && k < len(rest) {
		mixed := &snippet{block: b, mode: Mixed, imports: lines[:n], decls: rest[:k], stmts: rest[k:]}
		mixedErr := mixed.parse(fset, pkg)
		if mixedErr == nil {
			return mixed, nil
		}
		if further(mixedErr, furthest) {
			furthest = mixedErr
		}
	}
	return nil, furthest
}

// parse parses s's source (without the table's imports) into s.file, and sets the results
// of its wrapping function from its returns.
func (s *snippet) parse(fset *token.FileSet, pkg string) error {
	f, err := parser.ParseFile(fset, snippetFile, s.source(pkg, nil), parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	s.file, s.results = f, returnResults(f)
	return nil
}

// declarationsEnd returns how many lines of the block after its imports (from the Markdown
// line first) are declarations, from the error of parsing all as declarations: the line
// of its first error, when the parser met a statement there ("expected declaration").
func declarationsEnd(err error, first int) int {
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) == 0 || !strings.HasPrefix(list[0].Msg, "expected declaration") {
		return 0
	}
	return list[0].Pos.Line - first
}

// source is the Go file of s, with the table's imports given (name → path).
func (s *snippet) source(pkg string, extra map[string]string) string {
	var w strings.Builder
	line := s.block.Line + 1
	fmt.Fprintf(&w, "package %s\n", pkg)
	w.WriteString(lineDirective(s.block.File, line))
	writeLines(&w, s.imports)
	line += len(s.imports)
	w.WriteString(lineDirective(wrapperFile, 1))
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&w, "import %s %q\n", name, extra[name])
	}
	w.WriteString(lineDirective(s.block.File, line))
	writeLines(&w, s.decls)
	line += len(s.decls)
	if s.mode == Statements || s.mode == Mixed {
		w.WriteString(lineDirective(wrapperFile, 1))
		fmt.Fprintf(&w, "func _() %s {\n", resultList(s.results))
		w.WriteString(lineDirective(s.block.File, line))
		writeLines(&w, s.stmts)
		w.WriteString(lineDirective(wrapperFile, 2))
		if s.results > 0 {
			fmt.Fprintf(&w, "return %s\n", strings.TrimSuffix(strings.Repeat("nil, ", s.results), ", "))
		}
		w.WriteString("}\n")
	}
	return w.String()
}

func writeLines(w *strings.Builder, lines []string) {
	for _, l := range lines {
		w.WriteString(l + "\n")
	}
}

// resultList is the result list of a function whose returns have n results: the last an
// error (`return err`), the others anything (`return nil, err`).
func resultList(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "error"
	}
	return "(" + strings.Repeat("any, ", n-1) + "error)"
}

// returnResults is the most results of a return statement of the wrapping function (func
// _) in f (those of function literals inside are theirs).
func returnResults(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv != nil || fd.Name.Name != "_" {
			continue
		}
		ast.Inspect(fd.Body, func(node ast.Node) bool {
			switch r := node.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				n = max(n, len(r.Results))
			}
			return true
		})
	}
	return n
}

// startsWithPackage tells a block whose first token is the package keyword.
func startsWithPackage(src string) bool {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	_, tok, _ := s.Scan()
	return tok == token.PACKAGE
}

// importLines returns how many leading lines of b are import declarations (with the
// comments and blank lines among them), 0 without any.
func importLines(fset *token.FileSet, b Block, pkg string) (int, error) {
	src := fmt.Sprintf("package %s\n%s%s", pkg, lineDirective(b.File, b.Line+1), b.Source)
	f, err := parser.ParseFile(fset, snippetFile, src, parser.ImportsOnly)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			n = fset.Position(gd.End()).Line - b.Line
		}
	}
	return n, nil
}

// further tells whether parse error a is further into the block than b; an error in the
// code after the block (an unclosed brace) is the furthest.
func further(a, b error) bool {
	pa, pb := errorRank(a), errorRank(b)
	return pa[0] > pb[0] || pa[0] == pb[0] && pa[1] > pb[1]
}

// errorRank is the line and column of err's first error; after the block, the most.
func errorRank(err error) [2]int {
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return [2]int{}
	}
	if p := list[0].Pos; p.Filename != wrapperFile {
		return [2]int{p.Line, p.Column}
	}
	return [2]int{math.MaxInt, 0}
}

// topLevelNames returns the names a block declares at the package level (blanks and the
// wrapping function aside).
func topLevelNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "_" {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					names[sp.Name.Name] = true
				case *ast.ValueSpec:
					for _, id := range sp.Names {
						if id.Name != "_" {
							names[id.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// qualifiers returns the identifiers f uses as X of X.Sel: the package names it may mean.
func qualifiers(f *ast.File) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

// importedNames returns the names f's imports bind (a path without a name: the package
// name, from names by path).
func importedNames(f *ast.File, pkgNames map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, "`\"")
		switch {
		case imp.Name != nil:
			out[imp.Name.Name] = true
		case pkgNames[path] != "":
			out[pkgNames[path]] = true
		default:
			out[path[strings.LastIndex(path, "/")+1:]] = true
		}
	}
	return out
}
